// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "geofence-agent",
    platforms: [.macOS(.v15)],
    // Exported: what is API. The Core Location-shaped core, the agent (`buildAgent`), offline geocoding and
    // map snapshots, and the two typed wrappers of C libraries. FuzzChecks only because the fuzzers' own
    // package (Fuzz/) links it. The rest (formats, outputs, jobs, the store) is the agent's inside.
    products: [
        .library(name: "GeofenceCore", targets: ["GeofenceCore"]),
        .library(name: "GeofenceAgent", targets: ["GeofenceAgent"]),
        .library(name: "Geocoding", targets: ["Geocoding"]),
        .library(name: "Maps", targets: ["Maps"]),
        .library(name: "Mosquitto", targets: ["Mosquitto"]),
        .library(name: "GPSD", targets: ["GPSD"]),
        .library(name: "FuzzChecks", targets: ["FuzzChecks"]),
        .executable(name: "geofence-agent", targets: ["geofence-agent"]),
        .executable(name: "geofence-bench", targets: ["geofence-bench"]),
        .executable(name: "geofence-demo", targets: ["geofence-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // The part that decides: geometry, GeoJSON validation, the spatial index and the
        // monitor state machine. No I/O and no C, so it is tested exhaustively and in isolation.
        .target(name: "GeofenceCore", dependencies: ["AsyncBroadcast", "EveryCore"]),
        // Pure work spread over a thread a core, on serial queues of its own (never libdispatch's watched
        // pool): the only dispatch the pure modules use, kept out of them.
        .target(name: "EveryCore"),
        // One small piece both the core and the MQTT client use: fan-out to any number of AsyncStreams.
        .target(name: "AsyncBroadcast"),
        // The executor on a thread of its own that the store runs on, and that waits for the fix sources
        // (gpsd's socket, a replay's timer) between its jobs.
        .target(
            name: "ThreadExecution",
            dependencies: ["CEpoll", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]
        ),
        // libmosquitto, through a shim header; `Mosquitto` is the one typed Swift wrapper over it and
        // the async MQTT client with its supervisor.
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .target(
            name: "Mosquitto",
            dependencies: [
                "CMosquitto",
                "AsyncBroadcast",
                "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // libgps, through a shim header that names what differs between gpsd releases; `GPSD` is the one
        // typed wrapper over it and the location source with its reader thread.
        .systemLibrary(name: "CGPS", pkgConfig: "libgps", providers: [.apt(["libgps-dev"])]),
        .target(
            name: "GPSD",
            dependencies: [
                "CGPS",
                "GeofenceCore",
                "AsyncBroadcast",
                "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The system's SQLite, and one thin typed wrapper over it (one owner per connection, typed errors).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // zlib, for the store's compressed geofence definitions.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "Deflate", dependencies: ["CZlib"]),
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        // The agent's durable state: monitors, conditions, records, the outbox and settings, migrated in steps.
        .target(
            name: "GeofenceStore",
            dependencies: [
                "SQLite", "Deflate", "GeofenceCore", "EveryCore", "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Offline geocoding, shaped like CLGeocoder: lookups over the gazetteer that
        // scripts/build-gazetteer.py builds from GeoNames and Natural Earth data. Pure: bytes in, answers out.
        .target(name: "Geocoding", dependencies: ["GeofenceCore", "EveryCore", "CPrefetch"]),
        // Map snapshots (MKMapSnapshotter-shaped): conditions, drives, events and points drawn as SVG in Web
        // Mercator. Pure: content in, the document's text out.
        .target(name: "Maps", dependencies: ["GeofenceCore"]),
        // The compiler's cache prefetch hint, which Swift lacks (header only, nothing linked).
        .systemLibrary(name: "CPrefetch"),
        // epoll, which Swift's Glibc module leaves out (header only): the executor's thread waits through it.
        .systemLibrary(name: "CEpoll"),
        // The files the agent reads and writes: conditions (GeoJSON), GPX, points CSV, the gazetteer, JSON lines.
        .target(name: "AgentFormats", dependencies: ["GeofenceCore", "Geocoding", "SystemMemory"]),
        // The process's memory as the kernel and glibc see it: a file mapped read-only (the gazetteer), and
        // freed heap given back after a burst.
        .target(name: "SystemMemory"),
        // Where a position is, as events and the status name it: the offline gazetteer, loaded off the pool.
        .target(
            name: "Places",
            dependencies: ["AgentFormats", "Geocoding", "GeofenceCore", "SystemMemory", "ThreadExecution"]
        ),
        // The outputs, one folder each behind one protocol: our own topics, OwnTracks, Home Assistant,
        // Prometheus. Each decides what to send for what happened and reads its own object of config.json.
        .target(
            name: "AgentOutputs",
            dependencies: [
                "AgentFormats", "GeofenceCore", "GPSD", "GeofenceStore", "Mosquitto", "Geocoding", "Places",
                "SystemMemory", "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // The runtime (`buildAgent`): the services, the fix path, the outbox's publisher.
        .target(
            name: "GeofenceAgent",
            dependencies: [
                "AgentFormats", "AgentOutputs", "AsyncBroadcast", "GeofenceCore", "GPSD", "GeofenceStore", "Mosquitto",
                "Geocoding", "Places", "SystemMemory", "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // What the CLI's subcommands do (simulate, evaluate, locations, map, geocode, conditions, push, status),
        // behind a thin `@main`.
        .target(
            name: "AgentJobs",
            dependencies: [
                "AgentFormats", "AgentOutputs", "GeofenceAgent", "GeofenceCore", "GeofenceStore", "Mosquitto",
                "Geocoding", "Maps", "Places", "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "geofence-agent",
            dependencies: [
                "AgentFormats", "AgentJobs", "AgentOutputs", "GeofenceAgent",
                "GeofenceCore", "Places", "ThreadExecution",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The release agent carries the Swift runtime and Foundation in itself: a vehicle needs no Swift
            // install, it starts in 7 ms instead of 13 (no dynamic linking of 14 more libraries), and each
            // fix costs about a tenth less CPU, calls into the runtime no longer going through the PLT
            // (docs/benchmarks.md). Debug builds, which the tests link many times, stay dynamic.
            swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
        ),
        // Tooling, in Tools/: what tests, benchmarks, the demo and the fuzzers use; nothing a vehicle runs.
        // A simulated GNSS receiver (correlated Gaussian error, optimistic accuracies, Doppler speed) and the
        // parked and crossing scenarios that the decision tests and `geofence-bench decisions` share.
        .target(name: "ReceiverSimulation", dependencies: ["GeofenceCore"], path: "Tools/ReceiverSimulation"),
        // What a fleet of N vehicles publishes, made by the agent's own output code (the dashboard's load).
        .target(
            name: "FleetSimulation",
            dependencies: [
                "AgentFormats", "AgentOutputs", "GeofenceCore", "GeofenceStore", "Mosquitto", "ReceiverSimulation",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tools/FleetSimulation"
        ),
        // Runs a mosquitto or a gpsd of our own on loopback (tests, benchmarks, the demo), stopped by PID.
        .target(name: "LocalServers", dependencies: ["GeofenceCore"], path: "Tools/LocalServers"),
        // What the benchmarks compute from their samples, and the verdicts they print: tested in the unit lane.
        .target(name: "BenchFigures", path: "Tools/BenchFigures"),
        .executableTarget(
            name: "geofence-bench",
            dependencies: [
                "BenchFigures", "GeofenceCore",
                "AgentFormats", "AgentJobs", "AgentOutputs", "GeofenceAgent",
                "Mosquitto",
                "LocalServers",
                "GeofenceStore",
                "ReceiverSimulation",
                "FleetSimulation",
                "Geocoding", "SystemMemory",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/geofence-bench"
        ),
        // The README's demo: a local broker, gpsd replaying a real drive, geofences pushed over MQTT.
        .executableTarget(
            name: "geofence-demo",
            dependencies: [
                "LocalServers", "Mosquitto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/geofence-demo"
        ),
        // What the fuzz targets (the package in Fuzz/) check on each input; the replay tests check the same
        // on the seed corpora and on every input a fuzzer once failed on.
        .target(
            name: "FuzzChecks",
            dependencies: ["GeofenceCore", "AgentFormats", "AgentJobs", "AgentOutputs", "GeofenceAgent", "GPSD"],
            path: "Tools/FuzzChecks"),
        // Tests live in three lanes, a folder each (docs/testing.md): Tests/Unit runs in process with no child
        // process, socket or real sleep; Tests/Integration starts a broker, gpsd or the binary; Tests/System
        // starts browsers, network namespaces, clusters, the soak and agent-fuzz. `scripts/test LANE` runs one.
        // Test helpers shared by several test targets, in Tests/Support.
        .target(
            name: "TestSupport",
            dependencies: [
                "GeofenceStore", "Deflate", "Maps", "GeofenceCore", "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/TestSupport"),
        // A real gpsd fed the bundled captures, and the oracles the source and the decoder are held to.
        .target(
            name: "GPSDTestSupport",
            dependencies: [
                "CGPS", "GPSD", "GeofenceCore", "LocalServers", "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/GPSDTestSupport",
            resources: [.copy("Fixtures")]),
        // The built binaries run as a technician would, the synthetic drive and the sail, and their fixtures.
        .target(
            name: "AgentTestSupport",
            dependencies: [
                "AgentFormats", "AgentJobs", "AgentOutputs", "GeofenceAgent", "GeofenceStore", "LocalServers",
                "Mosquitto", "TestSupport", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/AgentTestSupport",
            resources: [.copy("Fixtures")]),
        // The whole agent in process (`buildAgent`) on an in-memory broker, fed by the test: the runtime's
        // behaviour tests without a process, a socket or a real sleep.
        .target(
            name: "AgentTesting",
            dependencies: [
                "AgentFormats", "AgentOutputs", "GeofenceAgent", "GeofenceCore", "Mosquitto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/Support/AgentTesting"),

        // Unit lane.
        unitTests(
            "GeofenceCoreTests",
            ["GeofenceCore", "ReceiverSimulation", .product(name: "PropertyBased", package: "swift-property-based")],
            resources: [.copy("Fixtures")]),
        unitTests("GeocodingTests", ["Geocoding", "GeofenceCore"]),
        unitTests("EveryCoreTests", ["EveryCore"]),
        unitTests("BenchFiguresTests", ["BenchFigures"]),
        unitTests("MapsTests", ["Maps", "GeofenceCore"]),
        unitTests("AgentJobsTests", ["AgentJobs", "GeofenceCore"]),
        unitTests("FuzzChecksTests", ["FuzzChecks", "GeofenceCore"]),
        unitTests(
            "ThreadExecutionTests",
            ["ThreadExecution", "GeofenceStore", .product(name: "Logging", package: "swift-log")]),
        unitTests(
            "GeofenceStoreTests",
            [
                "GeofenceStore", "GeofenceCore", "SQLite", "ThreadExecution", "AsyncBroadcast",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        unitTests(
            "GPSDTests",
            [
                "GPSD", "GPSDTestSupport", "GeofenceCore", "AsyncBroadcast", "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        unitTests(
            "AgentFormatsTests", ["AgentFormats", "AgentTestSupport", "GeofenceCore", "Geocoding", "SystemMemory"]),
        unitTests(
            "AgentOutputsTests",
            [
                "AgentOutputs", "AgentFormats", "AgentTestSupport", "GeofenceAgent", "GeofenceCore", "GeofenceStore",
                "GPSD", "Mosquitto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]),
        unitTests("FleetSimulationTests", ["FleetSimulation", "AgentOutputs", "GeofenceCore", "ReceiverSimulation"]),
        unitTests(
            "GeofenceAgentTests",
            [
                "GeofenceAgent", "AgentFormats", "AgentJobs", "AgentOutputs", "AgentTestSupport", "AgentTesting",
                "GeofenceCore", "GeofenceStore", "GPSD", "LocalServers", "Mosquitto", "Places", "SQLite",
                "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]),

        // Integration lane.
        integrationTests(
            "MosquittoIntegrationTests",
            ["Mosquitto", "LocalServers", "ThreadExecution", .product(name: "Logging", package: "swift-log")]),
        integrationTests(
            "GPSDIntegrationTests",
            [
                "GPSD", "GPSDTestSupport", "GeofenceCore", "LocalServers", "ThreadExecution",
                .product(name: "Logging", package: "swift-log"),
            ]),
        integrationTests("MapsIntegrationTests", ["Maps", "GeofenceCore", "LocalServers"]),
        integrationTests(
            "GeofenceAgentIntegrationTests",
            [
                "AgentFormats", "AgentJobs", "AgentOutputs", "AgentTestSupport", "GeofenceAgent", "GeofenceCore",
                "GeofenceStore", "Geocoding", "GPSD", "LocalServers", "Mosquitto", "ReceiverSimulation", "SQLite",
                "Deflate", "geofence-agent",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]),

        // System lane.
        systemTests(
            "GeofenceCoreSystemTests",
            [
                "GeofenceCore", "ReceiverSimulation",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        systemTests(
            "GeofenceAgentSystemTests",
            [
                "AgentFormats", "AgentOutputs", "AgentTestSupport", "FleetSimulation", "GeofenceAgent",
                "GeofenceCore", "LocalServers", "Mosquitto", "geofence-agent",
                .product(name: "Logging", package: "swift-log"),
            ],
            // The browser tests' Playwright driver, run from the source tree.
            exclude: ["Browser/page_driver.py"]),
    ],
    swiftLanguageModes: [.v6]
)

/// A test target of a lane: its folder is Tests/LANE/NAME, and TestSupport is always at hand.
func laneTests(
    _ lane: String, _ name: String, _ dependencies: [Target.Dependency], exclude: [String] = [],
    resources: [Resource]? = nil
) -> Target {
    .testTarget(
        name: name, dependencies: dependencies + ["TestSupport"], path: "Tests/\(lane)/\(name)", exclude: exclude,
        resources: resources)
}

func unitTests(_ name: String, _ dependencies: [Target.Dependency], resources: [Resource]? = nil) -> Target {
    laneTests("Unit", name, dependencies, resources: resources)
}

func integrationTests(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    laneTests("Integration", name, dependencies)
}

func systemTests(_ name: String, _ dependencies: [Target.Dependency], exclude: [String] = []) -> Target {
    laneTests("System", name, dependencies, exclude: exclude)
}
