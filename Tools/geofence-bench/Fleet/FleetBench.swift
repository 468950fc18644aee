import ArgumentParser
import FleetSimulation
import Foundation
import LocalServers
import Logging
import Mosquitto

/// `geofence-bench fleet`: what N vehicles publish, made by the agent's own payload code, to a broker:
/// the dashboard's load, to look at or to measure (`geofence-bench dashboard`).
struct FleetBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Publish what a simulated fleet of N vehicles publishes, in real time.",
        discussion: """
            Each vehicle drives (8 to 30 m/s, stopping now and then) in a square of 110 km in the middle \
            of the Netherlands (the IJsselmeer to its north), where the fleet's geofences lie, and publishes \
            what the agent publishes: its track every second (fleetTopics.trackBatchSeconds 0.5: each fix \
            one message, sent with the next), its location every 2 minutes, an event as it enters or leaves \
            a geofence, its state when that changes, and its status every minute. The geofences are \
            published first, retained, as an operator pushes them.

            Without --port it starts a mosquitto of its own whose WebSocket listener serves the dashboard, \
            and prints the page's address. Prints {"scenario": "fleet", ...} with what was sent; with \
            --subscribers K, {"scenario": "fleet-fan-out", ...}: what K subscribers to every track received.

            Example:
              swift run -c release geofence-bench fleet --vehicles 1000 --geofences 10000 --seconds 600
            """
    )

    @Option(help: "Vehicles in the fleet.")
    var vehicles = 1000

    @Option(help: "Geofences pushed to the fleet (half circles, half polygons).")
    var geofences = 10_000

    @Option(help: "How long to publish, in seconds.")
    var seconds = 600.0

    @Option(help: "A broker's port on 127.0.0.1 to publish to (default: a mosquitto of its own).")
    var port: Int?

    @Option(help: "The fleet's name in the topics (fleet/NAME/...).")
    var fleet = "sim"

    @Option(help: "The dashboard's directory, served by the mosquitto it starts.")
    var site = "dashboard"

    @Option(help: "Subscribers that take every vehicle's track as dashboards would, to measure the fan-out.")
    var subscribers = 0

    func run() async throws {
        UndoOnSignal.install()  // a stopped bench leaves none of its processes, namespaces or files
        var settings = FleetSimulationSettings(vehicles: vehicles, geofences: geofences)
        settings.fleet = fleet
        var broker: LocalMosquitto?
        var brokerPort = port
        if brokerPort == nil {
            let local = try LocalMosquitto()
            local.logsEveryMessage = false
            let web = try local.addWebSocketListener(httpDirectory: URL(fileURLWithPath: site).path)
            try local.start()
            broker = local
            brokerPort = local.port
            print("the dashboard: http://127.0.0.1:\(web)/?fleet=\(fleet)")
        }
        defer { broker?.stop() }
        let session = try await FleetSession(settings: settings, port: brokerPort!)
        let probe =
            subscribers > 0 ? try await FanOutProbe(subscribers: subscribers, port: brokerPort!, fleet: fleet) : nil
        let totals = try await session.run(seconds: seconds)
        if let probe { print(await probe.finish(seconds: seconds)) }
        await session.finish()
        print(
            #"{"scenario": "fleet", "vehicles": \#(vehicles), "geofences": \#(geofences), "seconds": \#(seconds), "#
                + #""messages": \#(totals.messages), "bytes": \#(totals.bytes), "late_slots": \#(totals.lateSlots)}"#)
    }
}

/// A simulated fleet connected to a broker: its geofences published, then its vehicles in real time.
actor FleetSession {
    let client: MQTTClient
    var fleet: SimulatedFleet

    init(settings: FleetSimulationSettings, port: Int) async throws {
        fleet = SimulatedFleet(settings: settings)
        var configuration = MQTTConfiguration(port: port, clientID: "fleet-simulator-\(getpid())")
        configuration.maximumInflight = 1000
        client = try MQTTClient(
            configuration: configuration, logger: Logger(label: "fleet") { _ in SwiftLogNoOpLogHandler() })
        await client.start()
        try await waitConnected(client)
        let publisher = FleetPublisher(client: client)
        let messages = fleet.geofenceMessages()
        for start in stride(from: 0, to: messages.count, by: 1000) {
            try await publisher.publish(Array(messages[start..<min(start + 1000, messages.count)]))
        }
    }

    func run(seconds: Double) async throws -> FleetPublisher.Totals {
        var running = fleet
        defer { fleet = running }
        return try await FleetPublisher(client: client).run(&running, seconds: seconds)
    }

    /// The vehicles go offline, and what the fleet retained on the broker is deleted.
    func finish() async {
        let publisher = FleetPublisher(client: client)
        try? await publisher.publish(fleet.goodbye())
        let cleanup = fleet.retainedCleanup()
        for start in stride(from: 0, to: cleanup.count, by: 1000) {
            try? await publisher.publish(Array(cleanup[start..<min(start + 1000, cleanup.count)]))
        }
        await client.shutdown()
    }
}
