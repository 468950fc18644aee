import AgentJobs
import ArgumentParser
import Foundation
import GeofenceAgent
import GeofenceCore
import Logging

struct Locations: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the locations the agent sees from gpsd, one per line.",
        discussion: """
            Connects to gpsd through libgps and prints one location per line after the agent's coalescing \
            (one per receiver epoch) and filters (no-fix reports dropped, speed spikes removed, accuracies \
            mapped to ~1 sigma). gpsd's status (unavailable, no device, no data, no fix) goes to stderr as it \
            changes. Output ends after --count locations or --timeout seconds (30 by default; --timeout 0 \
            follows until interrupted). Exit status 0 when a location was seen, 1 when none came, 2 for a bad \
            flag.

            With --json each line has time (the GPS time gpsd reported, ISO 8601, null when none), lat, lon, \
            mode, horizontalAccuracy, verticalAccuracy, speed, course (null when unknown), isStationary and \
            device. docs/locations.md describes every field.

            Examples:
              geofence-agent locations --count 10
              geofence-agent locations --gpsd 127.0.0.1:2947 --timeout 30 --json
              geofence-agent locations --live automotiveNavigation --json
            """
    )

    @Option(help: ArgumentHelp("gpsd's address.", valueName: "host:port"))
    var gpsd: String = "127.0.0.1:2947"

    @Option(help: "Follow only this receiver (gpsd's device path); default: the best active one.")
    var device: String?

    @Option(help: "Stop after this many locations.")
    var count: Int?

    @Option(help: "Stop after this many seconds; 0 follows until interrupted.")
    var timeout: Double = 30

    @Flag(help: "One JSON object per line.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "Print live updates of a preset instead of every location: \(LiveConfiguration.allCases.map(\.rawValue).joined(separator: ", ")).",
            valueName: "preset"))
    var live: String?

    @Flag(help: "Log the source's reconnects and watchdog to stderr.")
    var verbose = false

    func validate() throws {
        _ = try GPSDAddress.parse(gpsd)
        if let count, count <= 0 {
            throw ValidationError("--count must be a positive number of locations, got \(count)")
        }
        if !(timeout.isFinite && timeout >= 0) {
            throw ValidationError("--timeout must be a number of seconds, 0 or more, got \(timeout)")
        }
        if let live, LiveConfiguration(rawValue: live) == nil {
            throw ValidationError(
                "--live must be one of \(LiveConfiguration.allCases.map(\.rawValue).joined(separator: ", ")), got '\(live)'"
            )
        }
    }

    func run() async throws {
        var options = LocationsJob.Options()
        (options.host, options.port) = try GPSDAddress.parse(gpsd)
        options.device = device
        options.count = count
        options.timeout = timeout > 0 ? timeout : nil
        options.json = json
        options.live = live.flatMap(LiveConfiguration.init(rawValue:))
        var logger = Logger(label: "geofence-agent.locations")
        logger.logLevel = verbose ? .debug : .critical
        do {
            try await LocationsJob.run(
                options, logger: logger,
                emit: { line in
                    // One line as soon as it is known, also into a pipe (`| grep`, `| tee`): unbuffered.
                    writeLine(line, to: STDOUT_FILENO)
                }, warn: { printError($0) })
        } catch {
            printError("error: \(error.message)")
            throw ExitCode(error.exitCode)
        }
    }
}

/// `host`, `host:port` or `[v6-address]:port`.
enum GPSDAddress {
    static func parse(_ text: String) throws -> (String, Int) {
        var host = text
        var portText = "2947"
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") { portText = String(rest.dropFirst()) } else if !rest.isEmpty { throw bad(text) }
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = String(text[text.index(after: colon)...])
        }
        guard !host.isEmpty, let port = Int(portText), (1...65535).contains(port) else { throw bad(text) }
        return (host, port)
    }

    private static func bad(_ text: String) -> ValidationError {
        ValidationError("--gpsd must be HOST or HOST:PORT with a port from 1 to 65535, got '\(text)'")
    }
}
