import ArgumentParser
import Foundation
import GeofenceAgent
import GeofenceCore
import GeofenceStore
import LocalServers
import Logging
import Mosquitto

/// `geofence-bench soak`: a long accelerated drive through a real gpsd, a real mosquitto and the agent,
/// with the faults a vehicle meets, checking that nothing is lost and nothing grows.
struct SoakBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract:
            "Drive for hours at many times real time through gpsd, mosquitto and the agent, with restarts and outages; check delivery and growth.",
        discussion: """
            A synthetic receiver drives back and forth along a 9 km road at 15 m/s through six circle \
            geofences, one fix a second, for --hours of driving, fed to a real gpsd at --speed times real time. \
            While it runs: the broker is restarted every --broker-restart-every seconds and is down once for \
            --outage seconds; gpsd is restarted --gpsd-restarts times; the agent is killed with SIGKILL and \
            started again --kills times (the drive waits while gpsd or the agent is away, so no crossing passes \
            unseen); live updates are turned on and off; other geofences are pushed and deleted throughout.
            A subscriber with a persistent session collects the events. At the end:
              - every transition `geofence-agent simulate` gives on the same drive, delivered exactly once after \
            de-duplication by eventId, in order per geofence;
              - the agent's RSS every 10 s, the largest in the first and the last hour of driving, and in the first \
            and the last tenth of the run (rss.csv in a kept directory has every sample);
              - the store and its write-ahead log, largest and at the end;
              - open files and threads of the last agent process, first and last;
              - the agent's CPU time per fix.
            One JSON line (progress on stderr); exit status 1 when delivery fails, or (in a run of 5 minutes or \
            more) memory grew by more than 10% from the first hour of driving to the last, or from the first tenth of \
            the run to the last.

            Example:
              swift build -c release && .build/release/geofence-bench soak --hours 24 --speed 50
            """
    )

    @Option(help: "Hours of driving.")
    var hours = 24.0

    @Option(help: "How many times faster than real time gpsd is fed.")
    var speed = 50.0

    @Option(help: "Seconds between broker restarts.")
    var brokerRestartEvery = 180.0

    @Option(help: "Seconds of the one long broker outage (0: none).")
    var outage = 600.0

    @Option(help: "gpsd restarts.")
    var gpsdRestarts = 3

    @Option(help: "SIGKILLs of the agent.")
    var kills = 3

    @Flag(help: "Keep the run's directory (agent logs, store) and print where it is.")
    var keep = false

    @OptionGroup var agent: AgentExecutable

    func validate() throws {
        guard hours > 0, speed >= 1, brokerRestartEvery > 5, outage >= 0, gpsdRestarts >= 0, kills >= 0 else {
            throw ValidationError(
                "--hours must be positive, --speed at least 1, --broker-restart-every over 5 s, the counts 0 or more")
        }
        guard LocalGPSD.isInstalled else {
            throw ValidationError("the soak needs gpsd (\(LocalGPSD.executable)): scripts/setup installs it")
        }
    }

    func run() async throws {
        UndoOnSignal.install()  // a stopped bench leaves none of its processes, namespaces or files
        let soak = try Soak(options: self, agentPath: try agent.path())
        let result = try await soak.run()
        print(result.line)
        if !result.passed { throw ExitCode(1) }
    }
}
