import AgentFormats
import Foundation
import GeofenceCore
import GeofenceStore
import ReceiverSimulation

/// The soak's drive: back and forth along a 9 km road heading east from 52° N 5° E, at 15 m/s, one fix a
/// second, through six circles of 150 m on the road.
struct SoakDrive {
    let seconds: Int
    static let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
    static let origin = (lat: 52.0, lon: 5.0)
    static let length = 9_000.0, speed = 15.0
    static let metresPerDegreeLongitude = 111_320.0 * cos(origin.lat * .pi / 180)
    static let circles: [(id: String, x: Double)] = [
        ("s1", 1_000), ("s2", 2_500), ("s3", 4_000), ("s4", 5_500), ("s5", 7_000), ("s6", 8_500),
    ]

    var identifiers: Set<String> { Set(Self.circles.map(\.id)) }

    /// Metres east of the origin and the course at second `k`.
    static func position(_ k: Int) -> (x: Double, course: Double) {
        let leg = length / speed
        let phase = Double(k).truncatingRemainder(dividingBy: 2 * leg)
        return phase < leg ? (phase * speed, 90) : (length - (phase - leg) * speed, 270)
    }

    static func longitude(_ x: Double) -> Double { origin.lon + x / metresPerDegreeLongitude }

    static func feature(_ id: String, x: Double, north: Double = 0, radius: Double) -> String {
        let lat = origin.lat + north / 111_200
        return
            #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(longitude(x)),\#(lat)]},"properties":{"radius":\#(radius)}}"#
    }

    var features: [(String, String)] { Self.circles.map { ($0.id, Self.feature($0.id, x: $0.x, radius: 150)) } }

    var geofences: String {
        #"{"type":"FeatureCollection","features":["# + features.map(\.1).joined(separator: ",") + "]}"
    }

    /// A geofence that comes and goes: every other one across the road.
    func churnFeature(_ id: String, k: Int) -> String {
        Self.feature(id, x: Double((k * 731) % 9_000), north: k % 2 == 0 ? 0 : 600, radius: 100)
    }

    func sentences() -> [String] {
        (0..<seconds).map { k in
            let p = Self.position(k)
            return NMEA.epoch(
                latitude: Self.origin.lat, longitude: Self.longitude(p.x),
                time: Self.start.addingTimeInterval(Double(k)),
                speedKnots: Self.speed * 3600 / 1852, course: p.course)
        }
    }

    /// The same drive as GPX, for `simulate`.
    func gpx() -> String {
        GPXWriter.track(
            (0..<seconds).map { k in
                let p = Self.position(k)
                return Location(
                    coordinate: Coordinate(latitude: Self.origin.lat, longitude: Self.longitude(p.x)),
                    horizontalAccuracy: -1, speed: Self.speed, course: p.course,
                    timestamp: Self.start.addingTimeInterval(Double(k)))
            }, creator: "geofence-bench soak")
    }
}

/// When each fault happens, in seconds of real time from the start of the drive.
struct SoakSchedule {
    enum Fault: Equatable { case restartBroker, stopBroker, startBroker, restartGPSD, killAgent }
    private var faults: [(at: Double, fault: Fault)]

    init(realSeconds r: Double, options: SoakBench) {
        var list: [(Double, Fault)] = []
        let outage = options.outage > 0 ? (start: 0.4 * r, end: 0.4 * r + options.outage) : nil
        if let outage { list += [(outage.start, .stopBroker), (outage.end, .startBroker)] }
        var t = options.brokerRestartEvery
        while t < r {
            if outage.map({ t < $0.start - 5 || t > $0.end + 5 }) ?? true { list.append((t, .restartBroker)) }
            t += options.brokerRestartEvery
        }
        for i in 0..<options.gpsdRestarts {
            list.append((r * (Double(i) + 0.55) / Double(options.gpsdRestarts), .restartGPSD))
        }
        for i in 0..<options.kills { list.append((r * (Double(i) + 0.8) / Double(options.kills), .killAgent)) }
        faults = list.sorted { $0.0 < $1.0 }
    }

    var summary: String {
        let counts = Dictionary(grouping: faults, by: { "\($0.fault)" }).mapValues(\.count)
        return counts.keys.sorted().map { "\($0) ×\(counts[$0]!)" }.joined(separator: ", ")
    }

    /// The next fault if its time has come.
    mutating func due(at now: Double) -> Fault? {
        guard let first = faults.first, first.at <= now else { return nil }
        return faults.removeFirst().fault
    }

    /// The next fault still to come, whatever its time (after the drive: the broker must come back).
    mutating func remaining() -> Fault? { faults.isEmpty ? nil : faults.removeFirst().fault }
}

/// What the soak samples of the agent and its store.
struct SoakSamples {
    var rss: [(at: Double, megabytes: Double)] = []
    var storeMegabytes: [Double] = []
    var walMegabytes: [Double] = []
    /// Open files and threads of the current agent process, from its start.
    var lastProcessFDs: [Int] = []
    var lastProcessThreads: [Int] = []
    var processes = 0
    private var endedCPU = 0.0
    private var sampledPID: pid_t = 0

    mutating func take(pid: pid_t, at: Double, store: String) {
        if pid != sampledPID {
            lastProcessFDs = []
            lastProcessThreads = []
            sampledPID = pid
        }
        if at >= 0 { rss.append((at, residentMegabytes(of: pid))) }
        let paths = StorePaths(store)
        func megabytes(_ path: String) -> Double {
            Double((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / 1_048_576
        }
        storeMegabytes.append(megabytes(store) + megabytes(paths.writeAheadLog))
        walMegabytes.append(megabytes(paths.writeAheadLog))
        if let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") {
            lastProcessFDs.append(fds.count)
        }
        if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") }),
            let n = Int(line.split(separator: "\t").last ?? "")
        {
            lastProcessThreads.append(n)
        }
    }

    /// Adds a process's CPU time before it goes.
    mutating func endProcess(_ pid: pid_t) { endedCPU += Self.cpuSeconds(pid) }

    func cpuSeconds(adding pid: pid_t) -> Double { endedCPU + Self.cpuSeconds(pid) }

    /// User and system CPU seconds of a running process, from /proc/PID/stat.
    static func cpuSeconds(_ pid: pid_t) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14 and stime 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
