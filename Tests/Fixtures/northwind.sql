-- The shape of the Northwind sample database as its SQLite ports have it (written for these
-- tests, not copied): TEXT keys (Customers, Territories, CustomerDemographics), a composite
-- key on "Order Details" (a table named with a space), two pure join tables
-- (EmployeeTerritories, CustomerCustomerDemo, one of them keyed by TEXT on both sides), a
-- self-reference (Employees.ReportsTo), bracket-quoted names, CHECK constraints, and views.
-- Used by GeneratorEndToEndTests (northwind.swift.expected) and compiled by .ci/check-generated.

CREATE TABLE [Categories] (
    [CategoryID] INTEGER PRIMARY KEY AUTOINCREMENT,
    [CategoryName] TEXT,
    [Description] TEXT,
    [Picture] BLOB
);

CREATE TABLE [CustomerCustomerDemo] (
    [CustomerID] TEXT NOT NULL,
    [CustomerTypeID] TEXT NOT NULL,
    PRIMARY KEY ("CustomerID", "CustomerTypeID"),
    FOREIGN KEY ([CustomerID]) REFERENCES [Customers] ([CustomerID])
        ON DELETE NO ACTION ON UPDATE NO ACTION,
    FOREIGN KEY ([CustomerTypeID]) REFERENCES [CustomerDemographics] ([CustomerTypeID])
        ON DELETE NO ACTION ON UPDATE NO ACTION
);

CREATE TABLE [CustomerDemographics] (
    [CustomerTypeID] TEXT NOT NULL,
    [CustomerDesc] TEXT,
    PRIMARY KEY ("CustomerTypeID")
);

CREATE TABLE [Customers] (
    [CustomerID] TEXT,
    [CompanyName] TEXT,
    [ContactName] TEXT,
    [ContactTitle] TEXT,
    [Address] TEXT,
    [City] TEXT,
    [Region] TEXT,
    [PostalCode] TEXT,
    [Country] TEXT,
    [Phone] TEXT,
    [Fax] TEXT,
    PRIMARY KEY (`CustomerID`)
);

CREATE TABLE [Employees] (
    [EmployeeID] INTEGER PRIMARY KEY AUTOINCREMENT,
    [LastName] TEXT,
    [FirstName] TEXT,
    [Title] TEXT,
    [TitleOfCourtesy] TEXT,
    [BirthDate] DATE,
    [HireDate] DATE,
    [Address] TEXT,
    [City] TEXT,
    [Region] TEXT,
    [PostalCode] TEXT,
    [Country] TEXT,
    [HomePhone] TEXT,
    [Extension] TEXT,
    [Photo] BLOB,
    [Notes] TEXT,
    [ReportsTo] INTEGER,
    [PhotoPath] TEXT,
    FOREIGN KEY ([ReportsTo]) REFERENCES [Employees] ([EmployeeID])
        ON DELETE NO ACTION ON UPDATE NO ACTION
);

CREATE TABLE [EmployeeTerritories] (
    [EmployeeID] INTEGER NOT NULL,
    [TerritoryID] TEXT NOT NULL,
    PRIMARY KEY ("EmployeeID", "TerritoryID"),
    FOREIGN KEY ([EmployeeID]) REFERENCES [Employees] ([EmployeeID])
        ON DELETE NO ACTION ON UPDATE NO ACTION,
    FOREIGN KEY ([TerritoryID]) REFERENCES [Territories] ([TerritoryID])
        ON DELETE NO ACTION ON UPDATE NO ACTION
);

CREATE TABLE [Order Details] (
    [OrderID] INTEGER NOT NULL,
    [ProductID] INTEGER NOT NULL,
    [UnitPrice] NUMERIC NOT NULL DEFAULT 0,
    [Quantity] INTEGER NOT NULL DEFAULT 1,
    [Discount] REAL NOT NULL DEFAULT 0,
    PRIMARY KEY ("OrderID", "ProductID"),
    CHECK ([Discount] >= (0) AND [Discount] <= (1)),
    CHECK ([Quantity] > (0)),
    CHECK ([UnitPrice] >= (0)),
    FOREIGN KEY ([OrderID]) REFERENCES [Orders] ([OrderID])
        ON DELETE NO ACTION ON UPDATE NO ACTION,
    FOREIGN KEY ([ProductID]) REFERENCES [Products] ([ProductID])
        ON DELETE NO ACTION ON UPDATE NO ACTION
);

CREATE TABLE [Orders] (
    [OrderID] INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    [CustomerID] TEXT,
    [EmployeeID] INTEGER,
    [OrderDate] DATETIME,
    [RequiredDate] DATETIME,
    [ShippedDate] DATETIME,
    [ShipVia] INTEGER,
    [Freight] NUMERIC DEFAULT 0,
    [ShipName] TEXT,
    [ShipAddress] TEXT,
    [ShipCity] TEXT,
    [ShipRegion] TEXT,
    [ShipPostalCode] TEXT,
    [ShipCountry] TEXT,
    FOREIGN KEY ([EmployeeID]) REFERENCES [Employees] ([EmployeeID])
        ON DELETE NO ACTION ON UPDATE NO ACTION,
    FOREIGN KEY ([CustomerID]) REFERENCES [Customers] ([CustomerID])
        ON DELETE NO ACTION ON UPDATE NO ACTION,
    FOREIGN KEY ([ShipVia]) REFERENCES [Shippers] ([ShipperID])
        ON DELETE NO ACTION ON UPDATE NO ACTION
);

CREATE TABLE [Products] (
    [ProductID] INTEGER PRIMARY KEY AUTOINCREMENT,
    [ProductName] TEXT NOT NULL,
    [SupplierID] INTEGER,
    [CategoryID] INTEGER,
    [QuantityPerUnit] TEXT,
    [UnitPrice] NUMERIC DEFAULT 0,
    [UnitsInStock] INTEGER DEFAULT 0,
    [UnitsOnOrder] INTEGER DEFAULT 0,
    [ReorderLevel] INTEGER DEFAULT 0,
    [Discontinued] TEXT NOT NULL DEFAULT '0',
    CHECK ([UnitPrice] >= (0)),
    CHECK ([ReorderLevel] >= (0)),
    CHECK ([UnitsInStock] >= (0)),
    CHECK ([UnitsOnOrder] >= (0)),
    FOREIGN KEY ([CategoryID]) REFERENCES [Categories] ([CategoryID])
        ON DELETE NO ACTION ON UPDATE NO ACTION,
    FOREIGN KEY ([SupplierID]) REFERENCES [Suppliers] ([SupplierID])
        ON DELETE NO ACTION ON UPDATE NO ACTION
);

CREATE TABLE [Regions] (
    [RegionID] INTEGER NOT NULL PRIMARY KEY,
    [RegionDescription] TEXT NOT NULL
);

CREATE TABLE [Shippers] (
    [ShipperID] INTEGER PRIMARY KEY AUTOINCREMENT,
    [CompanyName] TEXT NOT NULL,
    [Phone] TEXT
);

CREATE TABLE [Suppliers] (
    [SupplierID] INTEGER PRIMARY KEY AUTOINCREMENT,
    [CompanyName] TEXT NOT NULL,
    [ContactName] TEXT,
    [ContactTitle] TEXT,
    [Address] TEXT,
    [City] TEXT,
    [Region] TEXT,
    [PostalCode] TEXT,
    [Country] TEXT,
    [Phone] TEXT,
    [Fax] TEXT,
    [HomePage] TEXT
);

CREATE TABLE [Territories] (
    [TerritoryID] TEXT NOT NULL,
    [TerritoryDescription] TEXT NOT NULL,
    [RegionID] INTEGER NOT NULL,
    PRIMARY KEY ("TerritoryID"),
    FOREIGN KEY ([RegionID]) REFERENCES [Regions] ([RegionID])
        ON DELETE NO ACTION ON UPDATE NO ACTION
);

CREATE VIEW [Alphabetical list of products] AS
SELECT Products.*, Categories.CategoryName
FROM Categories INNER JOIN Products ON Categories.CategoryID = Products.CategoryID
WHERE Products.Discontinued = 0;

CREATE VIEW [Current Product List] AS
SELECT ProductID, ProductName FROM Products WHERE Discontinued = 0;

CREATE VIEW [Order Subtotals] AS
SELECT [Order Details].OrderID,
       Sum(([Order Details].UnitPrice * Quantity * (1 - Discount) / 100) * 100) AS Subtotal
FROM [Order Details]
GROUP BY [Order Details].OrderID;

CREATE VIEW [Customer and Suppliers by City] AS
SELECT City, CompanyName, ContactName, 'Customers' AS Relationship FROM Customers
UNION
SELECT City, CompanyName, ContactName, 'Suppliers' FROM Suppliers
ORDER BY City, CompanyName;
