-- A shop, with the kinds of tables that databases written by other tools have: TEXT customer
-- codes, a one-to-one profile keyed by its customer, order lines with a composite key, a
-- UUID-keyed table, a keyless log, WITHOUT ROWID tables, a table named with spaces, a pure
-- self-join, a join table with its own id, a composite foreign key, a view, a full-text index.
-- Used by GeneratorEndToEndTests (shop.swift.expected) and compiled by .ci/check-generated.

CREATE TABLE customers (
    code TEXT PRIMARY KEY NOT NULL,              -- 'ALFKI': a natural TEXT key
    name TEXT NOT NULL,
    email TEXT UNIQUE,
    country TEXT NOT NULL DEFAULT 'FR',
    created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- One-to-one: the key is also the foreign key.
CREATE TABLE customer_profiles (
    customer_code TEXT PRIMARY KEY REFERENCES customers(code) ON DELETE CASCADE,
    newsletter BOOLEAN NOT NULL DEFAULT 0,
    notes TEXT
);

CREATE TABLE products (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    price DECIMAL(10, 2) NOT NULL DEFAULT 0
);

CREATE TABLE categories (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- A join table with its own id: pure all the same (only the two keys besides its id).
CREATE TABLE product_categories (
    id INTEGER PRIMARY KEY,
    product_id INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
    category_id INTEGER NOT NULL REFERENCES categories(id) ON DELETE CASCADE,
    UNIQUE (product_id, category_id)
);

-- Products shown together: a pure self-join, WITHOUT ROWID.
CREATE TABLE related_products (
    product_id INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
    related_id INTEGER NOT NULL REFERENCES products(id) ON DELETE CASCADE,
    PRIMARY KEY (product_id, related_id)
) WITHOUT ROWID;

CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_code TEXT NOT NULL REFERENCES customers(code) ON DELETE RESTRICT,
    placed_at DATETIME NOT NULL,
    status TEXT NOT NULL DEFAULT 'open'
);
CREATE INDEX orders_customer ON orders(customer_code);

-- Order lines: composite key (order_id, product_id), and a payload.
CREATE TABLE order_lines (
    order_id INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL DEFAULT 1,
    unit_price DECIMAL(10, 2) NOT NULL,
    PRIMARY KEY (order_id, product_id)
);

-- A note on an order line: a composite foreign key.
CREATE TABLE order_line_notes (
    id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL,
    product_id INTEGER NOT NULL,
    body TEXT NOT NULL,
    FOREIGN KEY (order_id, product_id) REFERENCES order_lines(order_id, product_id) ON DELETE CASCADE
);

-- Payments carry the UUID the payment server gave them.
CREATE TABLE payments (
    id UUID PRIMARY KEY NOT NULL,
    order_id INTEGER NOT NULL REFERENCES orders(id),
    amount DECIMAL(10, 2) NOT NULL,
    paid_at DATETIME
);

CREATE TABLE refunds (
    id INTEGER PRIMARY KEY,
    payment_id UUID NOT NULL REFERENCES payments(id),
    reason TEXT
);

-- Stock per SKU: WITHOUT ROWID, and a foreign key to a column that is not the parent's key.
CREATE TABLE stock (
    sku TEXT PRIMARY KEY REFERENCES products(sku),
    on_hand INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- A table and columns named with spaces.
CREATE TABLE "Gift Cards" (
    "Card Number" TEXT PRIMARY KEY NOT NULL,
    "Initial Value" DECIMAL(10, 2) NOT NULL,
    "Customer Code" TEXT REFERENCES customers(code) ON DELETE SET NULL
);

-- A keyless log.
CREATE TABLE audit_log (
    at DATETIME NOT NULL,
    actor TEXT,
    action TEXT NOT NULL
);

CREATE VIEW order_totals AS
    SELECT order_id, sum(quantity * unit_price) AS total FROM order_lines GROUP BY order_id;

CREATE VIRTUAL TABLE product_search USING fts5(name, content = 'products', content_rowid = 'id');
