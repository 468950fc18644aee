import Foundation
import LocalServers

/// Runs the built `geofence-agent` executable the way a technician would, capturing its output.
struct AgentBinary {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// The products directory holds this test bundle's resources and the executable side by side.
    static var url: URL {
        let products = Bundle.module.bundleURL.deletingLastPathComponent()
        return products.appendingPathComponent("geofence-agent")
    }

    static func fixture(_ name: String) -> String {
        Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures")!.path
    }

    static func run(_ arguments: [String], stdin input: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let inPipe = Pipe()
        if input != nil { process.standardInput = inPipe }
        try process.run()
        if let input {
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try inPipe.fileHandleForWriting.close()
        }
        // Both pipes are read while the child runs, so a large output cannot stall it, and drained once it
        // has exited rather than read to end of file: a process another test spawned meanwhile may have
        // inherited the pipes' write ends and would hold the end of file back for its whole life (seen as
        // an 82 s `locations` run in a parallel CI run).
        let outReader = PipeReader(out.fileHandleForReading.fileDescriptor)
        let errReader = PipeReader(err.fileHandleForReading.fileDescriptor)
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outReader.finish(), as: UTF8.self),
            stderr: String(decoding: errReader.finish(), as: UTF8.self))
    }

    /// Writes `text` to a temporary file and returns its path.
    static func temporaryFile(_ text: String, suffix: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "geofence-test-\(UUID().uuidString)\(suffix)")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}
