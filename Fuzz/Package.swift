// swift-tools-version: 6.1
// The fuzz targets: built only by scripts/fuzz, with libFuzzer and AddressSanitizer
// (`--sanitize=fuzzer --sanitize=address`), in their own scratch path. Each target's main.swift holds only
// libFuzzer's entry point; what it checks is FuzzChecks, in the main package, which the replay tests use too.
import PackageDescription

let targets = ["JSON", "GeoJSON", "Codec", "Config", "Command", "GPX", "PointsCSV", "Fixes", "Reports"]

let package = Package(
    name: "geofence-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "geofence-agent", path: "..")],
    targets: targets.map { name in
        .executableTarget(
            name: "Fuzz\(name)",
            dependencies: [.product(name: "FuzzChecks", package: "geofence-agent")],
            path: "Sources/Fuzz\(name)"
        )
    },
    swiftLanguageModes: [.v6]
)
