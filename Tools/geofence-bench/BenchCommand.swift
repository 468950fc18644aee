import ArgumentParser

/// Benchmarks that print one JSON line per scenario. Later subcommands measure gpsd, MQTT and the
/// whole agent; `core` measures the geofence engine.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geofence-bench",
        abstract: "Measure geofence-agent's speed and memory; prints one JSON line per scenario.",
        subcommands: [
            CoreBench.self, DecisionsBench.self, MQTTBench.self, GPSDBench.self, ResumeBench.self, E2EBench.self,
            SyncBench.self, GeocodeBench.self, AgentFuzzBench.self, SoakBench.self, BudgetBench.self, LinkBench.self,
            TripsBench.self, FleetBench.self, DashboardBench.self, ColdDecisionBench.self, ClusterScaleBench.self,
        ]
    )
}
