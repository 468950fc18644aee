import AgentTestSupport
import Foundation
import TestSupport
import Testing

@testable import AgentFormats

/// The GPX reader read as a stream of XML events: what it reads, and which fault it names first.
@Suite(.offTheCooperativePool(.computing)) struct GPXTrackTests {
    func parse(_ body: String) throws(AgentError) -> [GPXPoint] {
        let gpx = "<gpx version=\"1.1\"><trk><trkseg>\n\(body)\n</trkseg></trk></gpx>"
        return try GPXTrack.parse(Array(gpx.utf8), name: "drive.gpx")
    }

    /// The message of the error that `body` gets, or nil when it reads.
    func fault(_ body: String) -> String? {
        do {
            _ = try parse(body)
            return nil
        } catch { return error.message }
    }

    /// Values wrapped in any of Unicode's white space read as they did through `CharacterSet`: ASCII's
    /// is answered without the property tables, the rest through them.
    @Test func valuesAreReadInsideUnicodesWhiteSpace() throws {
        let points = try parse(
            "<trkpt lat=\"52\" lon=\"5\"><ele>\u{A0}2.5\u{200B}\u{2003}</ele><speed>\n\t 3 \r\n</speed>"
                + "<course>\u{3000}90\u{85}</course><time> 2026-01-01T00:00:01Z\u{2029}</time></trkpt>")
        let point = try #require(points.first)
        #expect(point.elevation == 2.5)
        #expect(point.speed == 3)
        #expect(point.course == 90)
        #expect(point.time == Date(timeIntervalSince1970: 1_767_225_601))
    }

    /// Every Unicode scalar is white space to the reader exactly when it is to
    /// `CharacterSet.whitespacesAndNewlines`, which the reader used to trim with.
    @Test func whiteSpaceIsFoundationsForEveryScalar() {
        let foundation = CharacterSet.whitespacesAndNewlines
        let differing = (0...0x10FFFF).compactMap(Unicode.Scalar.init).filter {
            GPXTrack.isSpace($0) != foundation.contains($0)
        }
        #expect(differing.isEmpty, "\(differing.prefix(10).map { String($0.value, radix: 16) })")
    }

    /// A letter or a digit is not white space, whatever its script: it stays in the value and is refused.
    @Test func aNonSpaceScalarAroundAValueIsRefused() {
        #expect(
            fault("<trkpt lat=\"52\" lon=\"5\"><ele>\u{663}</ele></trkpt>")
                == "drive.gpx:2: <ele> '\u{663}' is not an elevation in metres")
        #expect(
            fault("<trkpt lat=\"52\" lon=\"5\"><ele>\u{A0}2m</ele></trkpt>")
                == "drive.gpx:2: <ele> '2m' is not an elevation in metres")
    }

    /// Trimmed by scalars, as Foundation did: a combining mark after the value stays with it, a space a
    /// mark follows is trimmed up to the mark, and a space that a prepended mark (U+0600) takes into its
    /// grapheme is trimmed all the same (a bound stepped by Characters kept it).
    @Test func trimmingGoesByScalarsNotCharacters() {
        #expect(GPXTrack.trimmed(" 2\u{301} ") == "2\u{301}")
        #expect(GPXTrack.trimmed(" 2\u{600} ") == "2\u{600}")
        #expect(GPXTrack.trimmed("\u{600}\u{A0}") == "\u{600}")
        #expect(GPXTrack.trimmed(" \u{301}2\r\n") == "\u{301}2")
        #expect(GPXTrack.trimmed("\u{A0}\u{2003}") == "")
        #expect(GPXTrack.trimmed("") == "")
        for text in [" \u{301}2\r\n", " x\u{600}\u{A0}"] {
            #expect(GPXTrack.trimmed(text) == Substring(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
    }

    /// The file is read in one pass: the fault nearest its start is the one named.
    @Test func theFirstFaultInTheFileIsNamed() {
        #expect(
            fault("<trkpt lat=\"52\" lon=\"5\"><speed>-1</speed></trkpt>\n<trkpt lat=\"52\"")
                == "drive.gpx:2: <speed> '-1' is not a speed in m/s, 0 or more")
        #expect(
            fault("<trkpt lat=\"52\" lon=\"5\"></ele>\n<trkpt lat=\"52\" lon=\"5\"><speed>-1</speed></trkpt>")
                == "drive.gpx:2: not a readable GPX file: a closing tag does not match its opening tag")
    }

    /// Namespace prefixes are dropped from element names, and each kind of point is kept apart.
    @Test func prefixedElementsAndPointKindsAreRead() throws {
        let gpx = """
            <g:gpx xmlns:g="http://www.topografix.com/GPX/1/1"><g:wpt lat="1" lon="2"/>
            <g:rte><g:rtept lat="3" lon="4"><g:ele>7</g:ele></g:rtept></g:rte></g:gpx>
            """
        let points = try GPXTrack.parse(Array(gpx.utf8), name: "r.gpx")
        #expect(points.map(\.latitude) == [3], "route points before waypoints")
        #expect(points.first?.elevation == 7)
    }

    /// A track as long as a day's drive reads every point, in order, with its line.
    @Test func aLongTrackReadsEveryPoint() throws {
        let count = 20_000
        let body = (0..<count).map { k in
            "<trkpt lat=\"\(Double(k) * 1e-4)\" lon=\"5\"><time>\(RFC3339Text.at(k))</time></trkpt>"
        }.joined(separator: "\n")
        let points = try parse(body)
        #expect(points.count == count)
        #expect(points.enumerated().allSatisfy { k, p in p.line == k + 2 && p.latitude == Double(k) * 1e-4 })
        #expect(points.last?.time == Date(timeIntervalSince1970: 1_767_225_600 + Double(count - 1)))
    }
}

/// Times a second apart from 2026-01-01, as RFC 3339 text.
private enum RFC3339Text {
    static func at(_ second: Int) -> String {
        let (h, m, s) = (second / 3600, second / 60 % 60, second % 60)
        return "2026-01-01T" + [h, m, s].map { $0 < 10 ? "0\($0)" : "\($0)" }.joined(separator: ":") + "Z"
    }
}
