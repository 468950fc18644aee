import AgentFormats
import ArgumentParser
import Foundation
import GeofenceAgent
import GeofenceCore
import ThreadExecution

/// Parses the command line and hands over to the GeofenceAgent library; nothing else lives here.
@main
struct GeofenceAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geofence-agent",
        abstract: "Geofencing for vehicles: gpsd positions in, geofence events out over MQTT.",
        version: AgentVersion.string,
        subcommands: [
            Run.self, Status.self, Conditions.self, Push.self, Locations.self, Evaluate.self, Simulate.self, Map.self,
            Geocode.self, Reverse.self, Trips.self,
        ]
    )

    /// Tasks run on the agent's own pool, not libdispatch's, whose monitor would wake the vehicle every
    /// second (see `PoolExecutor`): the command runs with the pool as its tasks' preferred executor.
    static func main() async {
        await PoolExecutor(threads: ProcessInfo.processInfo.activeProcessorCount).run { await main(nil) }
    }
}

/// Options shared by subcommands that read GeoJSON.
struct LimitOptions: ParsableArguments {
    @Option(help: "Largest GeoJSON payload accepted, in bytes.")
    var maxBytes: Int = GeoJSONLimits.default.maximumPayloadBytes

    @Option(help: "Most positions accepted in one condition.")
    var maxVertices: Int = GeoJSONLimits.default.maximumVerticesPerCondition

    func validate() throws {
        guard maxBytes > 0 else { throw ValidationError("--max-bytes must be positive, got \(maxBytes)") }
        guard maxVertices > 0 else { throw ValidationError("--max-vertices must be positive, got \(maxVertices)") }
    }

    var limits: GeoJSONLimits {
        GeoJSONLimits(maximumPayloadBytes: maxBytes, maximumVerticesPerCondition: maxVertices)
    }
}

/// Runs a library job, printing its lines to stdout and its warnings to stderr, and turns an
/// `AgentError` into a message and an exit status.
func runJob(_ job: (_ emit: (String) -> Void, _ warn: (String) -> Void) throws(AgentError) -> Void) throws {
    do {
        try job({ print($0) }, { printError($0) })
    } catch {
        printError("error: \(error.message)")
        throw ExitCode(error.exitCode)
    }
}

/// The same for a job that awaits.
func runAsyncJob(_ job: () async throws(AgentError) -> Void) async throws {
    do {
        try await job()
    } catch {
        printError("error: \(error.message)")
        throw ExitCode(error.exitCode)
    }
}

func printError(_ text: String) {
    // Flush stdout first so that lines on both streams keep their order in a shared terminal.
    fflush(nil)
    writeLine(text, to: STDERR_FILENO)
}

/// Writes a line to `fd` at once, unbuffered, so that a pipe's reader (`| grep`, `| tee`) has it now: the
/// line's own bytes in one `write` where it fits, with no copy into `Data` on the way.
func writeLine(_ text: String, to fd: Int32) {
    var line = text + "\n"
    line.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += n
        }
    }
}
