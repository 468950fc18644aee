import AgentOutputs
import AgentTestSupport
import FleetSimulation
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

/// The dashboard with a fleet: the simulated fleet (the agent's own payload code) through a real mosquitto
/// into headless Chromium, at a reduced size (300 vehicles at 1 Hz, 3,000 geofences; `geofence-bench
/// dashboard` measures 100 to 5,000); a street map from a tile server of the test's own; lakes as water.
@Suite(.offTheCooperativePool(.waiting), .serialized) struct DashboardFleetTests {

    @Test func theDashboardKeepsUpWithAFleet() async throws {
        let (broker, webPort) = try LocalMosquitto.servingDashboard(logsEveryMessage: false)
        defer { broker.stop() }
        var fleet = SimulatedFleet(settings: FleetSimulationSettings(vehicles: 300, geofences: 3000))
        var configuration = MQTTConfiguration(port: broker.port, clientID: "fleet-test")
        configuration.maximumInflight = 1000
        let client = try MQTTClient(
            configuration: configuration, logger: Logger(label: "fleet") { _ in SwiftLogNoOpLogHandler() })
        await client.start()
        defer { Task { await client.shutdown() } }
        #expect(await waitUntil(30) { client.status.isConnected })
        let publisher = FleetPublisher(client: client)
        try await publisher.publish(fleet.geofenceMessages())

        let page = try PageDriver()
        defer { try? page.close() }
        try page.open("http://127.0.0.1:\(webPort)/?fleet=sim")
        try page.wait("window.dashboard && dashboard.connected && dashboard.drawnGeofences().length === 3000")
        try page.evaluate("dashboard.resetMetrics(), true")

        // 20 seconds of the fleet, each second's messages in ten slots; what each vehicle last sent is kept.
        var lastPoint: [String: (Int, Int)] = [:]
        var events: [String: Int] = [:]
        // What each vehicle is inside at the end, by its own enter and exit events.
        var inside: [String: Set<String>] = [:]
        var published = 0
        let clock = ContinuousClock()
        let start = clock.now
        for k in 0..<200 {
            try await clock.sleep(until: start + .milliseconds(100 * k))
            let messages = fleet.tick(slot: k % 10, of: 10, at: Date())
            for m in messages {
                let vehicle = m.topic.split(separator: "/")[3]
                if m.topic.hasSuffix("/track"), let batch = TrackEncoding.decode(m.payload), let p = batch.points.last {
                    lastPoint["sim/\(vehicle)"] = (p.latitude, p.longitude)
                }
                if m.topic.hasSuffix("/events") {
                    events["sim/\(vehicle)", default: 0] += 1
                    let event = try #require(try JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any])
                    let identifier = try #require(event["identifier"] as? String)
                    if event["event"] as? String == "enter" {
                        inside["sim/\(vehicle)", default: []].insert(identifier)
                    } else {
                        inside["sim/\(vehicle)", default: []].remove(identifier)
                    }
                }
            }
            published += messages.count
            try await publisher.publish(messages)
        }
        #expect(lastPoint.count == 300)

        // The page catches up with every vehicle's last point, and has each vehicle's every event.
        let expected = lastPoint.map { "\($0.key) \($0.value.0) \($0.value.1)" }.sorted()
        let pageState = """
            [...dashboard.model.vehicles.values()].filter(v => v.location)
              .map(v => v.key + ' ' + Math.round(v.location.lat * 1e6) + ' ' + Math.round(v.location.lon * 1e6)).sort()
            """
        do {
            try page.wait(
                "(() => { const got = \(pageState); return JSON.stringify(got) === JSON.stringify(\(json(expected))); })()",
                timeout: 120)
        } catch {
            let got = try page.evaluate(pageState) as? [String] ?? []
            let missing = Set(expected).subtracting(got).sorted().prefix(5)
            let extra = Set(got).subtracting(expected).sorted().prefix(5)
            Issue.record("the page did not catch up: sent \(Array(missing)), the page has \(Array(extra))")
            throw error
        }
        let eventCounts = try #require(
            try page.evaluate(
                "Object.fromEntries([...dashboard.model.vehicles.values()].map(v => [v.key, v.events.length]))")
                as? [String: Int])
        #expect(eventCounts.filter { $0.value > 0 } == events, "every vehicle's events, once each")
        let metrics = try #require(try page.evaluate("dashboard.metrics()") as? [String: Any])
        #expect((metrics["handled"] as? Int ?? 0) >= published, "\(metrics)")
        #expect(((metrics["moveMs"] as? [String: Any])?["n"] as? Int ?? 0) > 0, "moves were drawn: \(metrics)")
        print("dashboard with 300 vehicles: \(published) messages published; the page: \(metrics)")

        // The whole fleet at zoom 9 is in clusters; up close, single vehicles.
        try page.evaluate("dashboard.map.setView([52.2, 5.5], 9), true")
        // Both read from one frame: a frame drawn between two reads (the view settling, a vehicle moving in)
        // counted some vehicles in a cluster of one and as a dot in the next.
        let frame = try #require(
            try page.wait(
                "(() => { const c = dashboard.clusters(); return c.length > 0 && [c, dashboard.drawnVehicles().length]; })()"
            ) as? [Any])
        let clusters = try #require(frame.first as? [Int])
        let drawnFar = try #require(frame.last as? Int)
        // Each cluster holds at least two; clusters and single dots together are at most the fleet (some are
        // outside the view).
        #expect(clusters.allSatisfy { $0 >= 2 } && clusters.reduce(0, +) + drawnFar <= 300, "\(clusters), \(drawnFar)")
        #expect(clusters.reduce(0, +) + drawnFar > 150, "most of the fleet is in view: \(clusters), \(drawnFar)")
        let screenshot = try page.screenshot("dashboard-fleet-300.png")
        let near = fleet.position(of: 6)
        try page.evaluate("dashboard.map.setView([\(near.latitude), \(near.longitude)], 15), true")
        try page.wait("dashboard.clusters().length === 0 && dashboard.drawnVehicles().length > 0")

        // The list draws only the rows in view; search and the filters narrow the list and the map.
        let rows = "[...document.querySelectorAll('#vehicles tbody tr[data-vehicle]')].map(tr => tr.dataset.vehicle)"
        let listed = try #require(
            try page.wait("(() => { const r = \(rows); return r.length > 0 && r; })()") as? [String])
        #expect(listed.count < 60, "a virtualized list: \(listed.count) rows for 300 vehicles")
        try page.evaluate("dashboard.setFilter({ search: 'v0007' }), true")
        try page.wait("(() => { const r = \(rows); return r.length === 1 && r[0] === 'sim/v0007'; })()")
        #expect(
            try page.wait(
                "dashboard.drawnVehicles().every(k => k === 'sim/v0007') && document.getElementById('vehicle-count').textContent"
            ) as? String == "1 of 300")
        try page.evaluate("dashboard.setFilter({ search: '', state: 'inside' }), true")
        // The fleet is the same for its seed: some vehicles end inside a geofence, and the filter shows those.
        let insideNow = inside.filter { !$0.value.isEmpty }
        try #require(!insideNow.isEmpty, "the simulated drive ends with a vehicle inside a geofence")
        #expect(
            try page.wait(
                "(() => { const r = [...document.querySelectorAll('#vehicles tbody tr[data-vehicle]')]; return r.length > 0 && r.every(tr => tr.cells[4].textContent.length > 0) && document.getElementById('vehicle-count').textContent; })()"
            ) as? String == "\(insideNow.count) of 300")
        let (someVehicle, itsGeofences) = insideNow.min { $0.key < $1.key }!
        let geofence = itsGeofences.sorted()[0]
        try page.evaluate("dashboard.setFilter({ state: '', geofence: '\(geofence)' }), true")
        let byGeofence = try #require(
            try page.wait("(() => { const r = \(rows); return r.length > 0 && r; })()") as? [String])
        let expectedByGeofence = insideNow.filter { $0.value.contains { $0.contains(geofence) } }.keys.sorted()
        #expect(byGeofence.sorted() == expectedByGeofence, "\(byGeofence), \(someVehicle) inside \(geofence)")
        print("dashboard screenshot: \(screenshot)")
        #expect(try page.pageErrors() == [])
    }

    @Test func theStreetMapComesFromTheConfiguredTileServer() async throws {
        let (broker, webPort) = try LocalMosquitto.servingDashboard()
        defer { broker.stop() }
        let (lat, lon, zoom) = (52.37, 4.89, 14)
        let tiles = try TileServer(latitude: lat, longitude: lon, zooms: 13...15)
        let template = tiles.template.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let page = try PageDriver()
        defer { try? page.close() }
        try page.open(
            "http://127.0.0.1:\(webPort)/?fleet=test&view=\(lat),\(lon),\(zoom)&tiles=\(template)&tilesAttribution=Test%20tiles"
        )
        try page.wait("window.dashboard && dashboard.connected && document.body.dataset.tiles === 'loaded'")

        // The page asked the server for the tiles in view, at the view's zoom, and shows them loaded.
        let loaded = try #require(
            try page.wait(
                """
                (() => { const map = document.getElementById('map').getBoundingClientRect();
                  const shown = [...document.querySelectorAll('img.leaflet-tile-loaded')].filter(img => {
                    const r = img.getBoundingClientRect();
                    return img.complete && img.naturalWidth === 256 && r.right > map.left && r.left < map.right
                      && r.bottom > map.top && r.top < map.bottom && getComputedStyle(img).visibility !== 'hidden';
                  }).map(img => img.src);
                  return shown.length >= 6 && shown; })()
                """) as? [String])
        let (cx, cy) = TileServer.tile(latitude: lat, longitude: lon, zoom: zoom)
        #expect(loaded.contains("http://127.0.0.1:\(tiles.port)/\(zoom)/\(cx)/\(cy).png"), "\(loaded)")
        #expect(loaded.allSatisfy { $0.hasPrefix("http://127.0.0.1:\(tiles.port)/\(zoom)/") })
        let requested = try #require(
            try page.evaluate(
                "performance.getEntriesByType('resource').map(e => e.name).filter(n => n.endsWith('.png') && n.includes(':\(tiles.port)/'))"
            ) as? [String])
        #expect(Set(loaded).isSubset(of: Set(requested)))
        // What a person sees in the middle of the centre tile is the server's colour for it (the screenshot's
        // pixel: the tiles come from another origin, so the page itself cannot read them).
        let (r, g, b) = TileServer.colour(z: zoom, x: cx, y: cy)
        let box = try #require(
            try page.evaluate(
                """
                (() => { const img = [...document.querySelectorAll('img.leaflet-tile-loaded')].find(i => i.src.endsWith('/\(zoom)/\(cx)/\(cy).png'));
                  const r = img.getBoundingClientRect(), m = document.getElementById('map').getBoundingClientRect();
                  const left = Math.max(r.left, m.left), right = Math.min(r.right, m.right);
                  const top = Math.max(r.top, m.top), bottom = Math.min(r.bottom, m.bottom);
                  return [Math.round((left + right) / 2), Math.round((top + bottom) / 2)]; })()
                """) as? [Int])
        let shot = try page.screenshot("dashboard-street-tiles.png")
        let image = try PNGImage(Array(Data(contentsOf: URL(fileURLWithPath: shot))))
        let pixel = image[box[0], box[1]]
        #expect(pixel.r == Int(r) && pixel.g == Int(g) && pixel.b == Int(b), "at \(box): \(pixel), not \((r, g, b))")
        #expect(
            try page.evaluate("document.querySelector('.leaflet-control-attribution').textContent") as? String
                == "Leaflet | Test tiles")
        print("dashboard screenshot: \(shot)")
        #expect(try page.pageErrors() == [])
    }

    @Test func theOfflineBasemapDrawsLakesAsWater() async throws {
        // The IJsselmeer (Natural Earth's lakes) is water, with Flevoland cut out of it as land.
        let data = try Data(contentsOf: Repository.url("dashboard/basemap.geojson"))
        let basemap = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let lakes = (basemap["features"] as? [[String: Any]] ?? []).filter {
            ($0["properties"] as? [String: Any])?["water"] as? Bool == true
        }
        let ijsselmeer = try #require(
            lakes.first { ($0["properties"] as? [String: Any])?["name"] as? String == "IJsselmeer" })
        let rings = try #require((ijsselmeer["geometry"] as? [String: Any])?["coordinates"] as? [[[Double]]])
        func inside(_ lon: Double, _ lat: Double, _ ring: [[Double]]) -> Bool {
            var result = false
            for i in ring.indices {
                let a = ring[i]
                let b = ring[(i + ring.count - 1) % ring.count]
                if (a[1] > lat) != (b[1] > lat), lon < (b[0] - a[0]) * (lat - a[1]) / (b[1] - a[1]) + a[0] {
                    result.toggle()
                }
            }
            return result
        }
        #expect(lakes.count >= 30)
        #expect(inside(5.3, 52.75, rings[0]) && !rings.dropFirst().contains { inside(5.3, 52.75, $0) }, "open water")
        #expect(rings.count >= 2 && rings.dropFirst().contains { inside(5.45, 52.45, $0) }, "Flevoland is an island")

        let (broker, webPort) = try LocalMosquitto.servingDashboard()
        defer { broker.stop() }
        let page = try PageDriver()
        defer { try? page.close() }
        try page.open("http://127.0.0.1:\(webPort)/?fleet=test&view=52.65,5.35,8")
        let count = try page.wait("document.body.dataset.basemap === 'loaded' && Number(document.body.dataset.lakes)")
        #expect(count as? Int == lakes.count)
        print("dashboard screenshot: \(try page.screenshot("dashboard-lakes.png"))")
        #expect(try page.pageErrors() == [])
    }
}

private func json(_ strings: [String]) -> String {
    String(decoding: try! JSONSerialization.data(withJSONObject: strings), as: UTF8.self)
}
