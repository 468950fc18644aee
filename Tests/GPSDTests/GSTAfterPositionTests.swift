import Foundation
import GPSD
import GeofenceCore
import LocalServers
import Testing

/// A receiver that sends its GST after its last position sentence (GGA, GSA, RMC, GST): gpsd reports the
/// GST after the epoch's TPV. Every fix with a time must carry the GST's own 1-sigma accuracy, with early
/// epoch close on, not the DOP-based figure gpsd derives for the TPV.
@Suite struct GSTAfterPositionTests {
    static let log = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/gst-after-rmc.log")

    /// The accuracy each epoch's GST states: √(σlat² + σlon²), by its hhmmss.
    static func expectedAccuracies() throws -> [String: Double] {
        var out: [String: Double] = [:]
        for line in try String(contentsOf: log, encoding: .utf8).split(separator: "\n") where line.hasPrefix("$GPGST") {
            let f = line.split(separator: "*")[0].split(separator: ",", omittingEmptySubsequences: false)
            let lat = Double(f[6])!
            let lon = Double(f[7])!
            out[String(f[1].prefix(6))] = (lat * lat + lon * lon).squareRoot()
        }
        return out
    }

    @Test func everyFixCarriesItsEpochsGSTAccuracy() async throws {
        let expected = try Self.expectedAccuracies()
        // Paced as a receiver's burst would be, but far faster than 1 Hz.
        let feed = try NMEAFeed(log: Self.log, interval: 0.0005)
        let gpsd = try LocalGPSD(sources: [feed.url])
        try gpsd.start()
        defer {
            gpsd.stop()
            feed.stop()
        }
        var configuration = GPSSourceConfiguration(host: "127.0.0.1", port: gpsd.port)
        configuration.epochEarlyClose = true
        let recorder = SourceRecorder(configuration)
        let fed = await recorder.wait(30) { _ in feed.linesSent == feed.lineCount }
        #expect(fed)
        _ = await recorder.wait(10) { $0.locations.filter { $0.gpsTime != nil }.count >= expected.count }
        try? await Task.sleep(for: .milliseconds(300))
        await recorder.stop()
        let timed = recorder.locations.filter { $0.gpsTime != nil }
        #expect(timed.count == expected.count, "\(timed.count) fixes with a time for \(expected.count) epochs")
        let clock = DateFormatter()
        clock.dateFormat = "HHmmss"
        clock.timeZone = TimeZone(identifier: "UTC")
        for location in timed {
            let key = clock.string(from: location.gpsTime!)
            let want = try #require(expected[key], "no GST for \(key)")
            #expect(
                abs(location.horizontalAccuracy - want) < 1e-6,
                "\(key): accuracy \(location.horizontalAccuracy), GST says \(want)")
        }
    }
}
