import AgentTestSupport
import TestSupport
import Testing

@testable import AgentFormats
@testable import GeofenceAgent

/// The GPX files' XML reader: what real GPX files hold reads as it should, and malformed files get the
/// line and the reason.
@Suite(.offTheCooperativePool(.computing)) struct XMLEventsTests {
    @Test func readsElementsAttributesTextAndReferences() throws {
        let xml = """
            \u{FEFF}<?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE gpx [ <!ENTITY x "y"> ]>
            <!-- a comment with <tags> -->
            <gpx a='1' b="&lt;&amp;&#233;&#xE9;">
              <name><![CDATA[Sail <1>]]> &amp; more</name><wpt lat="1" lon="2"/>
            </gpx>
            """
        let events = try XMLEvents.read(Array(xml.utf8))
        #expect(events.first == .start(name: "gpx", attributes: ["a": "1", "b": "<&éé"], line: 4))
        #expect(events.contains(.text("Sail <1>")))
        #expect(events.contains(.text(" & more")))
        #expect(events.contains(.start(name: "wpt", attributes: ["lat": "1", "lon": "2"], line: 5)))
        #expect(events.last == .end(name: "gpx", line: 6))
    }

    @Test(arguments: [
        ("", 1, "the file is empty or not XML"),
        ("<gpx><trk></gpx>", 1, "a closing tag does not match its opening tag"),
        ("<gpx>\n<trk>", 2, "the file ends before <trk> is closed (truncated?)"),
        ("<gpx a=1/>", 1, "attribute 'a' is not quoted"),
        ("<gpx a='1' a='2'/>", 1, "attribute 'a' is given twice"),
        ("<gpx>&nbsp;</gpx>", 1, "unknown reference '&nbsp;'"),
        ("<gpx>&#0;</gpx>", 1, "unknown reference '&#0;'"),
        ("<gpx/><gpx/>", 1, "content after the root element"),
        ("text<gpx/>", 1, "text outside the root element"),
        ("<?x?>\n<gpx", 2, "a tag is not closed"),
        ("<gpx><!-- open", 1, "a comment is not closed"),
    ])
    func refusesMalformedXMLWithItsLine(xml: String, line: Int, reason: String) {
        #expect(throws: XMLEvents.Failure(line: line, reason: reason)) { try XMLEvents.read(Array(xml.utf8)) }
    }
}
