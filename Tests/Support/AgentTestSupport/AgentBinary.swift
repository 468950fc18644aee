import Foundation
import LocalServers

/// Runs the built `geofence-agent` executable the way a technician would, capturing its output.
package struct AgentBinary {
    package struct Result {
        package var status: Int32
        package var stdout: String
        package var stderr: String
        package var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// The products directory holds this test bundle's resources and the executable side by side.
    package static var url: URL {
        let products = Bundle.module.bundleURL.deletingLastPathComponent()
        return products.appendingPathComponent("geofence-agent")
    }

    package static func fixture(_ name: String) -> String {
        Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures")!.path
    }

    /// Runs the agent to its end, its output through files: a pipe's end of file, or Foundation's
    /// notice of the exit, can wait on any process another test spawned meanwhile (they inherit what is
    /// open), where a file and `waitpid` cannot.
    package static func run(_ arguments: [String], stdin input: String? = nil) throws -> Result {
        let out = try temporaryFile("", suffix: ".out")
        let err = try temporaryFile("", suffix: ".err")
        let inPath = try input.map { try temporaryFile($0, suffix: ".in") }
        defer {
            for path in [out, err, inPath].compactMap({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
        }
        let pid = try LocalProcess.spawn(
            url.path, arguments, standardInput: inPath ?? "/dev/null", standardOutput: out, standardError: err)
        // A bound for a stuck run only: every command here ends by itself well within it.
        guard let status = LocalProcess.exitStatus(of: pid, within: 600) else {
            LocalProcess.terminate(pid)
            throw LocalServerError("geofence-agent \(arguments.first ?? "") ran for 600 s")
        }
        return Result(
            status: status, stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// Writes `text` to a temporary file and returns its path.
    package static func temporaryFile(_ text: String, suffix: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "geofence-test-\(UUID().uuidString)\(suffix)")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}

/// A test's own failure, with what went wrong.
package struct AgentTestError: Error, CustomStringConvertible {
    package var description: String
    package init(_ d: String) { description = d }
}
