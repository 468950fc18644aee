import AgentTestSupport
import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import AgentFormats
@testable import GeofenceAgent

/// Times in payloads: UTC, milliseconds, rounded to the nearest one.
@Suite(.offTheCooperativePool(.computing)) struct ISO8601Tests {
    @Test func gpsdsMillisecondsSurviveTheBinaryFraction() {
        #expect(iso8601(Date(timeIntervalSince1970: 1_767_225_602.1)) == "2026-01-01T00:00:02.100Z")
        #expect(iso8601(Date(timeIntervalSince1970: 1_584_538_099.6)) == "2020-03-18T13:28:19.600Z")
        #expect(
            iso8601(Date(timeIntervalSince1970: 1_767_225_599.9996)) == "2026-01-01T00:00:00.000Z",
            "rounding carries into the day")
        #expect(iso8601(Date(timeIntervalSince1970: -0.0004)) == "1970-01-01T00:00:00.000Z")
        #expect(iso8601(Date(timeIntervalSince1970: -0.0006)) == "1969-12-31T23:59:59.999Z")
        #expect(iso8601(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
    }

    /// Any millisecond from 1583 to 9999 reads the same as Foundation's format style, given a time a
    /// little past the millisecond (which that style truncates to).
    @Test func agreesWithFoundationOnEveryCalendarDay() async {
        await propertyCheck(count: 2000, input: Gen.int(in: -12_212_553_600_000...253_402_300_799_999)) {
            milliseconds in
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000 + 0.0002)
            let foundation = date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
            #expect(iso8601(date) == foundation, "\(milliseconds) ms")
        }
    }
}
