import AgentTestSupport
import Foundation
import GeofenceCore
import LocalServers
import Logging
import Mosquitto
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The dashboard (dashboard/) in a real browser: headless Chromium on the page that mosquitto's
/// WebSocket listener serves, with the real agent replaying a sail and geofences pushed over MQTT.
/// Every assertion reads the page's state (its DOM, and the model it draws from).
@Suite(.offTheCooperativePool(.waiting), .serialized) struct DashboardTests {
    static let site = Repository.url("dashboard").path
    /// A circle only vehicle v1 holds, on the sail's way out: entered and left.
    static let harbour =
        #"{"type":"Feature","id":"harbour","geometry":{"type":"Point","coordinates":[5.30941,52.8483]},"properties":{"radius":40,"name":"Harbour approach"}}"#

    /// The geofences drawn on the map's canvas, as "KEY STATE".
    static let drawnPaths = #"dashboard.drawnGeofences().map(k => k + ' ' + dashboard.geofenceState(k))"#
    static let feed =
        #"[...document.querySelectorAll('#events li[data-event]')].map(li => [li.dataset.identifier, li.dataset.event, li.dataset.time, li.dataset.eventId])"#

    @Test func theDashboardFollowsTheFleetLive() async throws {
        let (broker, webPort) = try LocalMosquitto.servingDashboard()
        defer { broker.stop() }
        let operatorClient = try await Sail.operatorClient(port: broker.port)
        defer { Task { await operatorClient.shutdown() } }

        // The operator's geofences: the examples for the fleet, one for v1 only, one for v2 only, one broken.
        try await Sail.pushGeofences(operatorClient)
        _ = try await operatorClient.publish(
            "fleet/test/vehicles/v1/geofences/harbour", text: Self.harbour, retain: true)
        _ = try await operatorClient.publish(
            "fleet/test/vehicles/v2/geofences/v2-yard",
            text:
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[5.305,52.846]},"properties":{"radius":80}}"#,
            retain: true)
        _ = try await operatorClient.publish(
            "fleet/test/geofences/broken",
            text:
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[5.3,91.2]},"properties":{"radius":50}}"#,
            retain: true)

        // The agent, ready to replay the sail (started once the page is watching).
        // A status every 10 s (the default is 15 minutes, to spare the link): the list shows the outbox drain.
        let agent = try Sail.agent(brokerPort: broker.port, speedFactor: 8) {
            $0["places"] = ["enabled": true]
            $0["fleetTopics"] = ["statusHeartbeatSeconds": 10]
        }
        defer { agent.kill(signal: SIGKILL) }
        let expected = try expectedEvents(agent)

        let page = try PageDriver()
        defer { try? page.close() }
        try page.open("http://127.0.0.1:\(webPort)/?fleet=test")
        try page.wait("window.dashboard && dashboard.connected")

        // Every pushed geofence is drawn (the v2 one as another vehicle's), and the broken one is listed, not drawn.
        let keys = [
            "test/start-buoy", "test/channel", "test/route", "test/gate", "test/marina", "test/v1/harbour",
            "test/v2/v2-yard",
        ]
        try page.wait("dashboard.drawnGeofences().length === \(keys.count)")
        let drawn = try #require(try page.evaluate(Self.drawnPaths) as? [String])
        #expect(Set(drawn.map { String($0.split(separator: " ")[0]) }) == Set(keys), "\(drawn)")
        let problem =
            try page.wait(#"document.querySelector('#geofences li.problem[data-geofence="test/broken"]')?.textContent"#)
            as? String
        #expect(problem?.contains("latitude 91.2") == true, "\(problem ?? "")")

        try agent.start()
        // The vehicle appears where the sail begins, and its marker moves along it with a trail.
        let first = try #require(
            try page.wait(
                #"dashboard.drawnVehicles().includes("test/v1") && dashboard.vehicleMarker("test/v1")"#
            ) as? [String: Double])
        let moved =
            try page.wait(
                """
                (() => { const at = dashboard.vehicleMarker("test/v1"); const v = dashboard.model.vehicles.get("test/v1");
                  const metres = dashboard.map.distance([\(first["lat"]!), \(first["lng"]!)], at);
                  return metres > 150 && v.trail.length >= 10 && metres; })()
                """) as? Double
        #expect((moved ?? 0) > 150)
        #expect(
            abs(first["lat"]! - 52.85014) < 0.001 && abs(first["lng"]! - 5.31358) < 0.001,
            "the sail begins at the start buoy: \(first)")
        // The status list: online with the receiver's fix while the drive runs (the status that says "fix"
        // follows the first one within a second: it goes out when it changes).
        let row = #"document.querySelector('#vehicles tr[data-vehicle="test/v1"]')"#
        let online =
            try page.wait(
                "\(row) && \(row).querySelector('.presence').textContent === 'online' && \(row).cells[2].textContent.startsWith('fix') && [...\(row).cells].map(c => c.textContent)"
            ) as? [String]
        #expect(online?[2].hasPrefix("fix") == true, "gps: \(online ?? [])")

        // The feed shows every transition `simulate` gives for the sail, newest first.
        let pairs = expected.map { "\($0.identifier) \($0.event)" }
        let feedJS =
            "(() => { const f = \(Self.feed); const got = f.map(e => e[0] + ' ' + e[1]); return \(jsonArray(pairs)).every(p => got.includes(p)) && f; })()"
        let feed = try #require(try page.wait(feedJS) as? [[String]])
        #expect(feed.map { "\($0[0]) \($0[1])" }.sorted() == pairs.sorted(), "\(feed)")
        let times = feed.map { $0[2] }
        #expect(times == times.sorted(by: >), "newest first: \(times)")
        #expect(Set(feed.map { $0[3] }).count == feed.count, "each event once")
        let drive = try page.screenshot("dashboard-drive.png")

        // At the end of the sail the geofences have the vehicle's final state; channel was inside on the way.
        let final = Dictionary(expected.map { ($0.identifier, $0.state) }, uniquingKeysWith: { $1 })
            .merging(["route": "satisfied"], uniquingKeysWith: { a, _ in a })
        let wantedStates = keys.map { key -> String in
            let id = String(key.split(separator: "/").last!)
            if key.hasPrefix("test/v2/") { return "\(key) other" }
            return "\(key) \(final[id] == "satisfied" ? "inside" : "outside")"
        }
        try page.wait(
            "(() => { const d = \(Self.drawnPaths); return \(jsonArray(wantedStates)).every(s => d.includes(s)); })()")
        // Each geofence's states, as the page painted them (dashboard.stateLog).
        let seen = try #require(try page.evaluate("dashboard.stateLog") as? [String: [String]])
        #expect(seen["test/channel"]?.contains("inside") == true && seen["test/channel"]?.last == "outside", "\(seen)")
        #expect(seen["test/v1/harbour"]?.contains("inside") == true, "\(seen)")

        // Live: a geofence pushed appears, a deleted one disappears, without a reload.
        _ = try await operatorClient.publish(
            "fleet/test/geofences/late-buoy",
            text:
                #"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[5.307,52.847],[5.308,52.847],[5.308,52.8475],[5.307,52.847]]]},"properties":{"name":"Late buoy"}}"#,
            retain: true)
        try page.wait(
            #"dashboard.drawnGeofences().includes('test/late-buoy') && document.querySelector('#geofences li[data-geofence="test/late-buoy"]')"#
        )
        _ = try await operatorClient.publish("fleet/test/geofences/gate", payload: [], retain: true)
        try page.wait(
            #"!document.querySelector('[data-geofence="test/gate"]') && dashboard.drawnGeofences().length === \#(keys.count)"#
        )
        // One the page can draw but the vehicle refuses (a negative dwell) is drawn as refused, with the reason.
        _ = try await operatorClient.publish(
            "fleet/test/geofences/bad-dwell",
            text:
                #"{"type":"Feature","geometry":{"type":"Point","coordinates":[5.306,52.8465]},"properties":{"radius":30,"dwell":-5}}"#,
            retain: true)
        let refusal =
            try page.wait(
                #"dashboard.geofenceState('test/bad-dwell') === 'refused' && document.querySelector('#geofences li[data-geofence="test/bad-dwell"] .refusal')?.textContent"#
            ) as? String
        #expect(refusal?.hasPrefix("refused by test/v1: properties.dwell") == true, "\(refusal ?? "")")
        // A refusal's time is when the vehicle received the geofence (its clock), and says so.
        #expect(
            try page.evaluate(#"document.querySelector('#events li.error .clock')?.textContent.trim()"#) as? String
                == "received")
        #expect(
            try page.evaluate(#"!document.querySelector('#geofences li[data-geofence="test/late-buoy"] .refusal')"#)
                as? Bool == true,
            "a Feature without an id is named by its topic, not refused")

        // The status list, once the broker has acknowledged the drive's events: an empty outbox (a status comes every 10 s, and on a busy machine the
        // first one can precede the acknowledgements, the last one follow the end of the replay); then offline
        // once the agent stops.
        let drained =
            try page.wait(
                "\(row) && \(row).cells[3].textContent === '0' && [...\(row).cells].map(c => c.textContent)"
            ) as? [String]
        #expect(drained?[1] == "online", "online with the outbox empty: \(drained ?? [])")
        #expect(agent.terminate(within: 15) != nil)
        try page.wait(
            #"\#(row).querySelector('.presence').textContent === 'offline' && dashboard.vehiclePresence('test/v1') === 'offline'"#
        )
        // After the drive, what the page kept of it. Times that read right: the date and the time in UTC, named as the vehicle's GPS time.
        let stamped = try #require(
            try page.evaluate(
                #"(() => { const li = document.querySelector('#events li[data-event]'); return [li.dataset.time, li.querySelector('time').textContent, li.querySelector('.clock').textContent.trim()]; })()"#
            ) as? [String])
        let shown = stamped[0].replacingOccurrences(of: "T", with: " ")
            .replacingOccurrences(of: #"(\.\d+)?Z$"#, with: "", options: .regularExpression)
        #expect(stamped[1] == "\(shown) UTC" && stamped[2] == "GPS", "\(stamped)")
        #expect(stamped[1].range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"#, options: .regularExpression) != nil)

        // History: the selected vehicle's trail over the last N minutes, and its events of that stretch.
        let historyJS =
            #"(() => { const h = document.getElementById('history'); return !h.hidden && Number(h.dataset.points) >= 10 && [Number(h.dataset.points), ...[...h.querySelectorAll('li[data-event]')].map(li => li.dataset.identifier + ' ' + li.dataset.event)]; })()"#
        try page.evaluate(
            "(() => { const m = document.getElementById('history-minutes'); m.value = '60'; m.dispatchEvent(new Event('change')); return true; })()"
        )
        let hour = try #require(try page.wait(historyJS) as? [Any])
        let hourEvents = hour.dropFirst().compactMap { $0 as? String }
        #expect(!hourEvents.isEmpty && Set(hourEvents).isSubset(of: Set(pairs)), "\(hour)")
        try page.evaluate(
            "(() => { const m = document.getElementById('history-minutes'); m.value = '5'; m.dispatchEvent(new Event('change')); return true; })()"
        )
        let five = try #require(
            try page.evaluate(#"Number(document.getElementById('history').dataset.points)"#) as? Int)
        #expect(five <= (hour[0] as? Int ?? 0) && five > 0, "5 minutes: \(five) fixes, 60: \(hour[0])")
        let offline = try page.screenshot("dashboard-offline.png")
        for path in [drive, offline] {
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            #expect(size > 20_000, "\(path): \(size) bytes")
        }
        print("dashboard screenshots: \(drive), \(offline)")
        #expect(try page.pageErrors() == [])
    }

    @Test func thePageDrawsOnTheEllipsoidAndRefusesBadMessages() async throws {
        let (broker, webPort) = try LocalMosquitto.servingDashboard()
        defer { broker.stop() }
        let page = try PageDriver()
        defer { try? page.close() }
        try page.open("http://127.0.0.1:\(webPort)/?fleet=test")
        try page.wait("window.dashboard && dashboard.connected && document.body.dataset.basemap === 'loaded'")

        // Circles: every outline point at the radius along the ellipsoid (GeofenceCore's Vincenty inverse),
        // near the equator, at 70°N, and across the antimeridian (longitudes continue past 180).
        for (lat, lon, radius) in [
            (52.85, 5.31, 60.0), (0.5, 10.0, 5_000.0), (70.0, 25.0, 50_000.0), (-16.5, 179.95, 20_000.0),
        ] {
            let points = try #require(
                try page.evaluate("GeofenceGeometry.circle(\(lat), \(lon), \(radius))") as? [[Double]])
            #expect(points.count == 96)
            for p in points {
                let d = Geodesic.distance(
                    Coordinate(latitude: lat, longitude: lon), Coordinate(latitude: p[0], longitude: p[1]))
                #expect(abs(d - radius) < 0.001, "\(lat),\(lon) r=\(radius): \(p) is \(d) m away")
            }
            let longitudes = points.map { $0[1] }
            #expect(longitudes.max()! - longitudes.min()! < 10, "one ring, not around the world")
        }
        // A corridor's band: its stroke, at the map's own projection, is twice the half-width on the ground.
        let band = try #require(
            try page.evaluate(
                """
                (() => { const m = dashboard.map; m.setView([60, 10], 14, { animate: false });
                  const w = GeofenceGeometry.corridorWeight(25, 60, m.getZoom());
                  const c = m.latLngToContainerPoint([60, 10]);
                  const a = m.containerPointToLatLng([c.x - w / 2, c.y]), b = m.containerPointToLatLng([c.x + w / 2, c.y]);
                  return [a.lat, a.lng, b.lat, b.lng]; })()
                """) as? [Double])
        let across = Geodesic.distance(
            Coordinate(latitude: band[0], longitude: band[1]), Coordinate(latitude: band[2], longitude: band[3]))
        #expect(abs(across - 50) < 0.5, "the band is \(across) m wide, not 50")

        // The model: what it takes and what it refuses, message by message.
        let results = try #require(
            try page.evaluate(
                """
                (() => { const m = new FleetModel({ prefix: 'fleet', feedLength: 3 });
                  const event = (id, n) => JSON.stringify({ eventId: id, sequence: n, identifier: 'depot', event: 'enter', state: 'satisfied', location: { lat: 1, lon: 2, gpsTime: '2026-01-01T00:00:0' + n + 'Z' } });
                  return {
                    otherPrefix: m.receive('other/test/geofences/a', '{}'),
                    unknownTopic: m.receive('fleet/test/vehicles/v1/cmd', 'reportState'),
                    notJSON: m.receive('fleet/test/vehicles/v1/location', '{nope'),
                    array: m.receive('fleet/test/vehicles/v1/state', '[1]'),
                    noLatitude: m.receive('fleet/test/vehicles/v1/location', '{"location":{"lon":5}}'),
                    badStatus: m.receive('fleet/test/vehicles/v1/status', '{"status":"maybe"}'),
                    wrongId: (m.receive('fleet/test/geofences/a', '{"type":"Feature","id":"b","geometry":{"type":"Point","coordinates":[5,52]},"properties":{"radius":9}}'), m.geofences.get('test/a').problem),
                    noRadius: (m.receive('fleet/test/geofences/c', '{"type":"Feature","geometry":{"type":"Point","coordinates":[5,52]},"properties":{}}'), m.geofences.get('test/c').problem),
                    multiPoint: (m.receive('fleet/test/geofences/d', '{"type":"Feature","geometry":{"type":"MultiPoint","coordinates":[]}}'), m.geofences.get('test/d').problem),
                    deleteUnknown: m.receive('fleet/test/geofences/zzz', ''),
                    deleteKnown: m.receive('fleet/test/geofences/a', ''),
                    first: m.receive('fleet/test/vehicles/v1/events', event('e1', 1)),
                    again: m.receive('fleet/test/vehicles/v1/events', event('e1', 1)),
                    capped: ['e2', 'e3', 'e4'].map((id, k) => m.receive('fleet/test/vehicles/v1/events', event(id, k + 2)) && id),
                    feed: m.feed.map(e => e.eventId),
                    location: (m.receive('fleet/test/vehicles/v1/location', '{"sequence":5,"location":{"lat":52,"lon":5}}'),
                               m.receive('fleet/test/vehicles/v1/location', '{"sequence":4,"location":{"lat":53,"lon":5}}'),
                               m.vehicles.get('test/v1').location.lat),
                    badTrack: m.receive('fleet/test/vehicles/v2/track', '{"sequence":9,"t":[17672256000],"lat":[1.5],"lon":[2],"acc":[3],"speed":[4],"course":[5]}'),
                    track: (m.receive('fleet/test/vehicles/v2/track',
                              '{"sequence":9,"vehicle":"v2","t":[17672256000,10],"lat":[52000000,100],"lon":[5000000,-200],"acc":[5,1],"speed":[123,-124],"course":[90,-91],"stationary":[1]}'),
                            (v => [v.location.lat, v.location.lon, v.location.accuracy, v.location.speed,
                                   v.location.isStationary, v.location.time, v.trail.length])(m.vehicles.get('test/v2'))),
                    olderTrack: (m.receive('fleet/test/vehicles/v2/track', '{"sequence":8,"t":[17672256000],"lat":[53000000],"lon":[5000000],"acc":[5],"speed":[1],"course":[1]}'),
                                 m.vehicles.get('test/v2').location.lat),
                  }; })()
                """) as? [String: Any])
        for key in [
            "otherPrefix", "unknownTopic", "notJSON", "array", "noLatitude", "badStatus", "deleteUnknown", "again",
        ] {
            #expect(results[key] is NSNull, "\(key): \(results[key] ?? "")")
        }
        #expect(
            (results["wrongId"] as? String)?.contains(#""b" is not the topic's "a""#) == true,
            "\(results["wrongId"] ?? "")")
        #expect((results["noRadius"] as? String)?.hasPrefix("properties.radius") == true)
        #expect((results["multiPoint"] as? String)?.hasPrefix("geometry.type: MultiPoint") == true)
        #expect((results["deleteKnown"] as? [String: Any])?["removed"] as? Bool == true)
        #expect(results["feed"] as? [String] == ["e4", "e3", "e2"], "newest first, the oldest dropped past feedLength")
        #expect(
            results["location"] as? Double == 52, "an older sequence (a retained copy) does not move the vehicle back")
        #expect(results["badTrack"] is NSNull, "a track whose points are not whole numbers is refused")
        let track = try #require(results["track"] as? [Any])
        #expect(abs((track[0] as? Double ?? 0) - 52.0001) < 1e-9 && abs((track[1] as? Double ?? 0) - 4.9998) < 1e-9)
        #expect(track[2] as? Double == 6 && track[3] is NSNull && track[4] as? Bool == true, "\(track)")
        #expect(track[5] as? String == "2026-01-01T00:00:01.000Z" && track[6] as? Int == 2, "\(track)")
        #expect(results["olderTrack"] as? Double == 52.0001, "an older batch does not move the vehicle back")
        #expect(try page.pageErrors() == [])
    }

    /// deploy/: the fleet broker as configured serves the page on its loopback listener and MQTT over
    /// WebSockets with TLS; the dashboard user signs in over wss and sees the fleet.
    @Test func theFleetBrokerServesTheDashboardToItsUserOverTLS() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fleet-broker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try LocalCertificates(in: directory)
        let passwd = directory.appendingPathComponent("passwd").path
        try LocalProcess.run("/usr/bin/mosquitto_passwd", ["-c", "-b", passwd, "vehicle-1", "pw1"], in: directory)
        try LocalProcess.run("/usr/bin/mosquitto_passwd", ["-b", passwd, "dashboard", "pwd"], in: directory)
        let mqttPort = try LocalProcess.freePort()
        let wssPort = try LocalProcess.freePort()
        let pagePort = try LocalProcess.freePort()
        // deploy/mosquitto-fleet.conf as shipped, with this test's paths and loopback ports.
        let deploy = Repository.url("deploy")
        var conf = try String(contentsOf: deploy.appendingPathComponent("mosquitto-fleet.conf"), encoding: .utf8)
        for (from, to) in [
            ("/etc/mosquitto/fleet.passwd", passwd),
            ("/etc/mosquitto/fleet.acl", deploy.appendingPathComponent("mosquitto-fleet.acl").path),
            ("/etc/mosquitto/certs/server.crt", certificates.certificateFile),
            ("/etc/mosquitto/certs/server.key", certificates.keyFile),
            ("/etc/mosquitto/certs/ca.crt", certificates.caFile), ("/usr/share/geofence-agent/dashboard", Self.site),
            ("listener 8883\n", "listener \(mqttPort) 127.0.0.1\n"), ("listener 8884\n", "listener \(wssPort) lo\n"),
            ("listener 9001 lo\n", "listener \(pagePort) lo\n"),
        ] {
            #expect(conf.contains(from), "deploy/mosquitto-fleet.conf has \(from)")
            conf = conf.replacingOccurrences(of: from, with: to)
        }
        conf = "user root\npersistence_location \(directory.path)/\nlog_dest file \(directory.path)/broker.log\n" + conf
        let confPath = directory.appendingPathComponent("mosquitto.conf").path
        try conf.write(toFile: confPath, atomically: true, encoding: .utf8)
        let pid = try LocalProcess.spawn("/usr/sbin/mosquitto", ["-c", confPath])
        defer { LocalProcess.terminate(pid) }
        for port in [mqttPort, wssPort, pagePort] {
            try LocalProcess.waitUntilListening(
                port: port, pid: pid, name: "mosquitto", log: "\(directory.path)/broker.log")
        }

        // The vehicle publishes its retained status and location over TLS, as the agent would.
        try "pw1".write(toFile: directory.appendingPathComponent("pw1").path, atomically: true, encoding: .utf8)
        var configuration = MQTTConfiguration(port: mqttPort, clientID: "vehicle-1")
        configuration.username = "vehicle-1"
        configuration.password = .file(directory.appendingPathComponent("pw1").path)
        configuration.tls = MQTTTLS(caFile: certificates.caFile)
        let vehicle = try MQTTClient(
            configuration: configuration, logger: Logger(label: "test.vehicle") { _ in SwiftLogNoOpLogHandler() })
        await vehicle.start()
        defer { Task { await vehicle.shutdown() } }
        #expect(await waitUntil(60) { vehicle.status.isConnected })
        #expect(
            try await vehicle.publish(
                "fleet/demo/vehicles/vehicle-1/status",
                text: #"{"status":"online","gps":{"state":"fix"},"outbox":{"rows":0}}"#, retain: true
            ).isSuccess)
        #expect(
            try await vehicle.publish(
                "fleet/demo/vehicles/vehicle-1/location",
                text: #"{"sequence":1,"location":{"lat":52.37,"lon":4.89,"horizontalAccuracy":4}}"#, retain: true
            ).isSuccess)

        // The page from the loopback listener (as nginx-dashboard.conf passes it on), its MQTT over wss:
        // refused without a user, then signed in as the dashboard.
        let page = try PageDriver()
        defer { try? page.close() }
        try page.open("http://127.0.0.1:\(pagePort)/?fleet=demo&broker=wss://127.0.0.1:\(wssPort)/", insecure: true)
        try page.wait("!document.getElementById('sign-in').hidden")
        try page.evaluate(
            """
            (() => { document.getElementById('username').value = 'dashboard'; document.getElementById('password').value = 'pwd';
              document.getElementById('sign-in').requestSubmit(); return true; })()
            """)
        try page.wait("dashboard.connected && dashboard.settings.broker.startsWith('wss://')")
        try page.wait(
            #"document.querySelector('#vehicles tr[data-vehicle="demo/vehicle-1"] .presence')?.textContent === 'online' && dashboard.vehicleMarker('demo/vehicle-1')"#
        )
        #expect(
            try page.pageErrors().allSatisfy {
                $0.contains("WebSocket") || $0.contains("Not authorized") || $0.contains("Connection refused")
            },
            "the only console errors are the refused first connection's")
    }

    /// The transitions `simulate` gives for the sail with the fleet's geofences and v1's own.
    private func expectedEvents(_ agent: AgentFixture) throws -> [(identifier: String, event: String, state: String)] {
        let data = try Data(contentsOf: Sail.examples.appendingPathComponent("ijsselmeer.geojson"))
        var collection = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        collection["features"] =
            (collection["features"] as? [Any] ?? []) + [try JSONSerialization.jsonObject(with: Data(Self.harbour.utf8))]
        let file = agent.directory.appendingPathComponent("expected.geojson")
        try JSONSerialization.data(withJSONObject: collection).write(to: file)
        let result = try AgentBinary.run(["simulate", "--conditions", file.path, "--track", Sail.track])
        return try result.lines.compactMap { line in
            guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let event = o["event"] as? String,
                event != "initial"
            else { return nil }
            return (o["identifier"] as! String, event, o["state"] as! String)
        }
    }
}

private func jsonArray(_ strings: [String]) -> String {
    String(decoding: try! JSONSerialization.data(withJSONObject: strings), as: UTF8.self)
}
