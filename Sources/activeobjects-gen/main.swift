// activeobjects-gen: the command-line face of ActiveObjectsGenerator.
import ActiveObjectsGenerator
import Foundation

let status = GeneratorCommand.run(
    Array(CommandLine.arguments.dropFirst()),
    standardOutput: { FileHandle.standardOutput.write(Data($0.utf8)) },
    standardError: { FileHandle.standardError.write(Data($0.utf8)) })
exit(status)
