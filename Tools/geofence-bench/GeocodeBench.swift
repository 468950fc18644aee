import AgentFormats
import ArgumentParser
import Foundation
import Geocoding
import GeofenceAgent
import GeofenceCore
import SystemMemory

/// `geofence-bench geocode`: the gazetteer's load time and memory, reverse and forward lookups, and the
/// Python package `reverse_geocoder` on the same points in the same run.
struct GeocodeBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geocode",
        abstract: "Measure offline geocoding: load, reverse and forward lookups, beside Python's reverse_geocoder.",
        discussion: """
            Prints one JSON line for ours and, when `python3 -c "import reverse_geocoder"` works (scripts/setup \
            --bench installs it), one for reverse_geocoder on the same land points, one query at a time and in \
            one batch. `rss_mb` is what the loaded gazetteer holds (freed heap given back first); \
            `rss_after_lookups_mb` what it holds after the lookups, which read the mapped file's pages in \
            across the world; `peak_rss_mb` is the high-water mark of the load above the process's size before \
            it, which is what the peer's `rss_mb` measures.

            Example:
              swift run -c release geofence-bench geocode
            """
    )

    @Option(help: "The gazetteer file (default: as geofence-agent finds it).")
    var gazetteer: String?

    @Option(help: "Random land points for reverse lookups.")
    var points = 100_000

    @Option(help: "Names drawn from the data for forward lookups.")
    var names = 10_000

    @Option(help: "Points given to reverse_geocoder one at a time (its batch gets them all).")
    var peerSingles = 2_000

    func run() throws {
        guard let path = GazetteerFile.locate(explicit: gazetteer) else {
            throw ValidationError("no gazetteer: run scripts/setup")
        }
        // The memory the gazetteer holds: one load, with the heap it freed on the way given back first.
        let before = residentMegabytes()
        var start = nowNanoseconds()
        let g = try GazetteerFile.load(path)
        var loads = [nowNanoseconds() - start]
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let peak = Double(usage.ru_maxrss) / 1024 - before
        HeapTrim.giveBackFreedMemory()
        let rss = residentMegabytes() - before
        for _ in 0..<4 {
            start = nowNanoseconds()
            _ = try GazetteerFile.load(path)
            loads.append(nowNanoseconds() - start)
        }
        loads.sort()

        // Land points: random over the inhabited latitudes, kept when a country's outline holds them.
        var rng = SplitMix64(seed: 3)
        var land: [Coordinate] = []
        while land.count < points {
            let c = Coordinate(
                latitude: Double.random(in: -56...72, using: &rng),
                longitude: Double.random(in: -180...180, using: &rng))
            if g.isoCountryCode(at: c) != nil { land.append(c) }
        }
        var reverse = [UInt64](repeating: 0, count: land.count)
        var check = 0
        for (i, c) in land.enumerated() {
            let start = nowNanoseconds()
            let p = try g.reverse(c)
            reverse[i] = nowNanoseconds() - start
            check &+= p.population
        }
        reverse.sort()

        let queries = (0..<names).map { _ in g.place(Int.random(in: 0..<g.count, using: &rng)).name }
        var forward = [UInt64](repeating: 0, count: queries.count)
        for (i, q) in queries.enumerated() {
            let start = nowNanoseconds()
            let found = (try? g.forward(q, limit: 1)) ?? []
            forward[i] = nowNanoseconds() - start
            check &+= found.count
        }
        forward.sort()
        HeapTrim.giveBackFreedMemory()
        let rssAfterLookups = residentMegabytes() - before
        print(
            jsonLine([
                "geocoder": "geofence-agent", "places": g.count,
                "load_ms": rounded(quantile(loads, 0.5) / 1e6, 1), "rss_mb": rounded(rss, 1),
                "rss_after_lookups_mb": rounded(rssAfterLookups, 1), "peak_rss_mb": rounded(peak, 1),
                "reverse_p50_us": rounded(quantile(reverse, 0.5) / 1e3),
                "reverse_p99_us": rounded(quantile(reverse, 0.99) / 1e3),
                "forward_p50_us": rounded(quantile(forward, 0.5) / 1e3),
                "forward_p99_us": rounded(quantile(forward, 0.99) / 1e3),
                "reverse_points": land.count, "forward_names": queries.count, "checksum": check,
            ]))
        fflush(nil)
        if let peer = try peerLine(land) { print(peer) }
    }

    /// reverse_geocoder (a k-d tree over GeoNames cities1000) on the same points, timed inside Python.
    private func peerLine(_ land: [Coordinate]) throws -> String? {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import reverse_geocoder"]
        probe.standardError = FileHandle.nullDevice
        try probe.run()
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else {
            FileHandle.standardError.write(
                Data("reverse_geocoder is not installed (scripts/setup --bench installs it); no peer line\n".utf8))
            return nil
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("geocode-bench-\(getpid()).csv")
        try land.map { "\($0.latitude),\($0.longitude)" }.joined(separator: "\n").write(
            to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = """
            import json, sys, time, resource
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            t = time.perf_counter()
            import reverse_geocoder as rg
            geo = rg.RGeocoder(mode=1, verbose=False)
            load = time.perf_counter() - t
            rss = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
            pts = [tuple(map(float, l.split(","))) for l in open(sys.argv[1])]
            singles = []
            for p in pts[:int(sys.argv[2])]:
                t = time.perf_counter_ns(); geo.query([p]); singles.append(time.perf_counter_ns() - t)
            singles.sort()
            t = time.perf_counter(); geo.query(pts); batch = time.perf_counter() - t
            q = lambda s, f: s[min(len(s) - 1, int(f * len(s)))] / 1000
            print(json.dumps({"geocoder": "reverse_geocoder (Python, k-d tree, mode 1)", "places": len(geo.locations) if hasattr(geo, "locations") else None,
                              "load_ms": round(load * 1000, 1), "rss_mb": round(rss, 1),
                              "reverse_p50_us": round(q(singles, 0.5), 3), "reverse_p99_us": round(q(singles, 0.99), 3),
                              "reverse_batch_us_per_point": round(batch / len(pts) * 1e6, 3), "reverse_points": len(pts)}))
            """
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", script, file.path, "\(peerSingles)"]
        let pipe = Pipe()
        python.standardOutput = pipe
        try python.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        python.waitUntilExit()
        guard python.terminationStatus == 0 else { return nil }
        return String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
