import Foundation

/// The `activeobjects-gen` command line: arguments, help, output and exit status.
public enum GeneratorCommand {
    /// The text of `--help`.
    public static let help = """
        activeobjects-gen: generate ActiveObject model classes from an existing SQLite schema.

        USAGE: activeobjects-gen SCHEMA [--table NAME]... [--output FILE] [--naming as-is|snake|upper-snake]
                                 [--soft-delete]

        ARGUMENTS:
          SCHEMA                 An SQLite database file (opened read-only, never modified), or a
                                 .sql file of CREATE statements (run into an in-memory database).

        OPTIONS:
          --table NAME           Generate only this table or view (repeatable). Default: all.
          --output FILE, -o FILE Write the Swift source to FILE instead of standard output.
          --naming CONVENTION    How property names map to column names:
                                   as-is        property name = column name (default); other columns
                                                get an explicit @Column("name")
                                   snake        firstName <-> first_name (override columnNaming)
                                   upper-snake  firstName <-> FIRST_NAME (override columnNaming)
          --soft-delete          Map nullable date columns named deleted_at, deleted_on or
                                 discarded_at to @Column(role: .deletedAt): delete() then marks
                                 rows instead of deleting them, and queries leave marked rows out.
          --help, -h             Show this help.

        Every table gets a model, whatever its key (INTEGER, TEXT, UUID, composite, none,
        WITHOUT ROWID), and every view a read-only one (isReadOnly; columns optional, typed from
        the values the file holds when SQLite declares no type). Virtual tables (FTS…) and
        their internal tables are skipped, with the reason on standard error; the full-text
        index ActiveObjects makes for a table becomes its model's searchableColumns. A join
        table (two foreign keys that identify its rows) gives HasManyThrough relations on both
        sides, whatever other columns it has.
        Columns whose default is the moment of the insert (CURRENT_TIMESTAMP, datetime('now'))
        and date columns named created_at/updated_at get @Column(role: .createdAt) or
        .updatedAt (the library stamps them); a NOT NULL integer lock_version gets
        @Column(role: .lockVersion).
        Exit status: 0 on success, 1 on an error, 2 on a usage error.

        EXAMPLE:
          swift run activeobjects-gen db/schema.sql --naming snake --output Sources/App/Models.swift
        """

    struct Arguments: Equatable {
        var schema: String?
        var output: String?
        var options = Generator.Options()
        var showHelp = false
    }

    /// Runs the command with `arguments` (without the program name) and returns the exit status.
    public static func run(_ arguments: [String],
                           standardOutput: (String) -> Void,
                           standardError: (String) -> Void) -> Int32 {
        do {
            let parsed = try parse(arguments)
            if parsed.showHelp {
                standardOutput(help + "\n")
                return 0
            }
            guard let schema = parsed.schema else { throw GeneratorError.usage("missing SCHEMA") }
            let output = try Generator.generate(schemaAt: schema, options: parsed.options)
            for warning in output.warnings { standardError("activeobjects-gen: \(warning)\n") }
            if let path = parsed.output {
                do {
                    try output.source.write(toFile: path, atomically: true, encoding: .utf8)
                } catch {
                    throw GeneratorError.cannotWrite(path, (error as NSError).localizedDescription)
                }
            } else {
                standardOutput(output.source)
            }
            return 0
        } catch let error as GeneratorError {
            standardError("activeobjects-gen: error: \(error)\n")
            if case .usage = error { standardError("Run activeobjects-gen --help for usage.\n") }
            return error.exitStatus
        } catch {
            standardError("activeobjects-gen: error: \(error)\n")
            return 1
        }
    }

    /// Parses the arguments by hand: `--name value`, `--name=value`, `-o value`.
    static func parse(_ arguments: [String]) throws -> Arguments {
        var result = Arguments()
        var remaining = arguments[...]
        func value(for option: String, inline: String?) throws -> String {
            if let inline { return inline }
            guard let next = remaining.popFirst(), !next.hasPrefix("-") || next == "-" else {
                throw GeneratorError.usage("\(option) needs a value")
            }
            return next
        }
        while let argument = remaining.popFirst() {
            var option = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                option = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            switch option {
            case "--help", "-h":
                result.showHelp = true
            case "--table":
                result.options.tables.append(try value(for: option, inline: inline))
            case "--output", "-o":
                guard result.output == nil else { throw GeneratorError.usage("--output given twice") }
                result.output = try value(for: option, inline: inline)
            case "--naming":
                let name = try value(for: option, inline: inline)
                guard let naming = NamingConvention(rawValue: name) else {
                    let known = NamingConvention.allCases.map(\.rawValue).joined(separator: ", ")
                    throw GeneratorError.usage("unknown naming \(name); use one of \(known)")
                }
                result.options.naming = naming
            case "--soft-delete":
                guard inline == nil else { throw GeneratorError.usage("--soft-delete takes no value") }
                result.options.softDelete = true
            case "--":
                for rest in remaining { try setSchema(rest, in: &result) }
                remaining = []
            default:
                if argument.hasPrefix("-") && argument != "-" {
                    throw GeneratorError.usage("unknown option \(argument)")
                }
                try setSchema(argument, in: &result)
            }
        }
        return result
    }

    private static func setSchema(_ path: String, in arguments: inout Arguments) throws {
        guard arguments.schema == nil else {
            throw GeneratorError.usage("more than one SCHEMA given (\(arguments.schema!), \(path))")
        }
        arguments.schema = path
    }
}
