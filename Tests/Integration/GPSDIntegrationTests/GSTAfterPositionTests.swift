import Foundation
import GPSD
import GPSDTestSupport
import GeofenceCore
import LocalServers
import TestSupport
import Testing

/// A receiver that sends its GST after its last position sentence (GGA, GSA, RMC, GST): gpsd reports the
/// GST after the epoch's TPV. Every fix with a time must carry the GST's own 1-sigma accuracy, with early
/// epoch close on, not the DOP-based figure gpsd derives for the TPV.
@Suite(.offTheCooperativePool(.waiting)) struct GSTAfterPositionTests {
    static let log = GPSDFixtures.directory.deletingLastPathComponent().appendingPathComponent("gst-after-rmc.log")

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

    /// The log's sentences grouped by epoch (each GGA starts one), each group one write.
    static func epochs() throws -> [String] {
        var epochs: [[String]] = []
        for line in try String(contentsOf: log, encoding: .utf8).split(separator: "\n") where line.hasPrefix("$") {
            let sentence = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.hasPrefix("$GPGGA") || epochs.isEmpty { epochs.append([]) }
            epochs[epochs.count - 1].append(sentence)
        }
        // The feed ends each item with CR LF.
        return epochs.map { $0.joined(separator: "\r\n") }
    }

    @Test func everyFixCarriesItsEpochsGSTAccuracy() async throws {
        let expected = try Self.expectedAccuracies()
        // Each epoch's four sentences written together, as a receiver's burst, epochs far faster than 1 Hz:
        // sentence by sentence, a busy machine could delay the GST past gpsd's reading of the epoch's end.
        let feed = try NMEAFeed(sentences: try Self.epochs(), interval: 0.02)
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
        _ = await recorder.wait(30) { $0.locations.filter { $0.gpsTime != nil }.count >= expected.count }
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
