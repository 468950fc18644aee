import Foundation
import GPSD
import GPSDTestSupport
import GeofenceCore
import LocalServers
import TestSupport
import Testing

/// Two receivers on one gpsd overwrite each other's reports; the source follows one.
@Suite(.offTheCooperativePool(.waiting)) struct SeveralDevicesTests {
    final class TwoReceivers: @unchecked Sendable {
        let a: NMEAFeed, b: NMEAFeed, gpsd: LocalGPSD
        init() throws {
            a = try NMEAFeed(log: GPSDFixtures.log("nmea-rtk"), interval: 0.0002)
            b = try NMEAFeed(log: GPSDFixtures.log("haicom-305N"), interval: 0.0002)
            gpsd = try LocalGPSD(sources: [a.url, b.url])
            try gpsd.start()
        }
        func stop() {
            gpsd.stop()
            a.stop()
            b.stop()
        }
        var fed: Bool { a.linesSent == a.lineCount && b.linesSent == b.lineCount }
    }

    @Test func theConfiguredDeviceIsTheOnlyOneUsed() async throws {
        let rig = try TwoReceivers()
        defer { rig.stop() }
        let expected = try ChkOracle.expected(chk: GPSDFixtures.chk("haicom-305N"))
        let recorder = SourceRecorder(GPSSourceConfiguration(host: "127.0.0.1", port: rig.gpsd.port, device: rig.b.url))
        _ = await recorder.wait(30) { $0.locations.count >= expected.count }
        try await Task.sleep(for: .milliseconds(300))
        await recorder.stop()
        #expect(recorder.locations.count == expected.count)
        #expect(recorder.locations.allSatisfy { $0.device == rig.b.url })
    }

    @Test func withoutAConfiguredDeviceOneActiveReceiverIsFollowed() async throws {
        let rig = try TwoReceivers()
        defer { rig.stop() }
        let recorder = SourceRecorder(GPSSourceConfiguration(host: "127.0.0.1", port: rig.gpsd.port))
        _ = await recorder.wait(30) { _ in rig.fed }
        try await Task.sleep(for: .milliseconds(300))
        await recorder.stop()
        let devices = Set(recorder.locations.compactMap(\.device))
        #expect(devices.count == 1, "locations hopped between \(devices)")
        #expect(recorder.locations.count > 50)
    }
}
