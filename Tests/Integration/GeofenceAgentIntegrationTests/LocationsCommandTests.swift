import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

@testable import AgentFormats

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-agent locations` as a technician runs it, against a gpsd of our own.
@Suite(.offTheCooperativePool(.waiting)) struct LocationsCommandTests {
    /// A receiver log bundled with the gpsd tests (gpsd project, BSD-2-Clause, see its COPYING.gpsd).
    static let log = Repository.url("Tests/Support/GPSDTestSupport/Fixtures/gpsd-logs/nmea-rtk.log")

    @Test func printsLocationsAsJSONLines() throws {
        let feed = try NMEAFeed(log: Self.log)
        defer { feed.stop() }
        let gpsd = try LocalGPSD(sources: [feed.url])
        try gpsd.start()
        defer { gpsd.stop() }
        let result = try AgentBinary.run([
            "locations", "--gpsd", "127.0.0.1:\(gpsd.port)", "--count", "5", "--json", "--timeout", "20",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.count == 5)
        let objects = try result.lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        for o in objects {
            for key in [
                "time", "lat", "lon", "mode", "horizontalAccuracy", "speed", "course", "device", "isStationary",
            ] {
                #expect(o.keys.contains(key), "missing \(key) in \(o)")
            }
            #expect(o["device"] as? String == feed.url)
        }
        // nmea-rtk's first fix has no time: it is held back until GPS time comes (docs/locations.md), so the
        // first line is the next fix, with the GPS time gpsd reported.
        #expect(objects[0]["time"] as? String == "2020-03-18T13:28:19.600Z")
        #expect((objects[0]["lat"] as? Double).map { abs($0 - 41.574965883) < 1e-6 } == true)
        #expect(objects.allSatisfy { $0["time"] is String }, "no fix without GPS time after the first one")
    }

    @Test func saysWhyWhenGpsdIsNotThere() throws {
        let port = try LocalProcess.freePort()
        let result = try AgentBinary.run(["locations", "--gpsd", "127.0.0.1:\(port)", "--timeout", "1"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("no location from gpsd at 127.0.0.1:\(port) within 1.0 s"))
        #expect(result.stderr.contains("can't connect"), "\(result.stderr)")
    }

    /// A gpsd address whose listener never accepts (its backlog full): the connect blocks for minutes, and
    /// the command must still end at its timeout.
    @Test func endsAtItsTimeoutWhenTheConnectHangs() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        let port = try #require(LoopbackConnection.bind(listener))
        try #require(listen(listener, 0) == 0)
        // Fill the backlog with connections nobody accepts, so that the next connect's SYN is dropped.
        var fillers: [Int32] = []
        defer { for filler in fillers { close(filler) } }
        for _ in 0..<4 {
            let c = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = LoopbackConnection.connect(c, port: port)
            fillers.append(c)
        }
        // Spawned and reaped directly rather than through Foundation's Process, whose exit detection was
        // seen to lag by 40–80 s in a loaded CI run while the command itself ends at 2 s.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("locations-\(UUID().uuidString).log")
            .path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let pid = try LocalProcess.spawn(
            AgentBinary.url.path, ["locations", "--gpsd", "127.0.0.1:\(port)", "--timeout", "2"],
            standardOutput: output, standardError: output)
        var status: Int32 = 0
        let start = ContinuousClock.now
        var exited = false
        while ContinuousClock.now - start < .seconds(30) {
            if waitpid(pid, &status, WNOHANG) == pid {
                exited = true
                break
            }
            usleep(10_000)
        }
        if !exited {
            kill(pid, SIGKILL)
            _ = LocalProcess.reap(pid, within: 5)
        }
        #expect(exited, "it ended at its timeout, not after the connect's retries")
        #expect(exited && (status >> 8) & 0xFF == 1, "exit status \((status >> 8) & 0xFF)")
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(text.contains("no location from gpsd at 127.0.0.1:\(port) within 2.0 s"), "\(text)")
    }

    @Test(arguments: [
        (["--gpsd", "localhost:notaport"], "--gpsd must be HOST or HOST:PORT"),
        (["--gpsd", "127.0.0.1:70000"], "--gpsd must be HOST or HOST:PORT"),
        (["--count", "0"], "--count must be a positive number"),
        (["--timeout=-3"], "--timeout must be a number of seconds, 0 or more, got -3.0"),
        (["--live", "walking"], "--live must be one of default, automotiveNavigation"),
    ])
    func rejectsABadFlagWithItsName(arguments: [String], message: String) throws {
        let result = try AgentBinary.run(["locations"] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func helpHasAnExample() throws {
        let result = try AgentBinary.run(["locations", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("geofence-agent locations --count 10"))
    }
}
