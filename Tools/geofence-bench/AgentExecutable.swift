import ArgumentParser
import Foundation

/// `--agent`: the geofence-agent executable a benchmark runs, by default the one built beside it.
struct AgentExecutable: ParsableArguments {
    @Option(name: .customLong("agent"), help: "The geofence-agent executable (default: beside this benchmark).")
    var explicitPath: String?

    /// The executable's path; fails with what to do when there is none.
    func path() throws -> String {
        let path =
            try explicitPath
            ?? URL(fileURLWithPath: FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent().appendingPathComponent("geofence-agent").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ValidationError("no geofence-agent at \(path); build it or pass --agent")
        }
        return path
    }
}
