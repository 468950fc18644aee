import Foundation
import GeofenceCore

/// Fixes as a GPX 1.0 track, with the receiver's speed and course (GPX 1.0's `speed` and `course`).
public enum GPXWriter {
    public static func track(_ fixes: [Location], creator: String = "geofence-agent tests") -> String {
        let times = ISO8601DateFormatter()
        times.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        out += #"<gpx version="1.0" creator="\#(creator)"><trk><trkseg>"# + "\n"
        for f in fixes {
            out += #"<trkpt lat="\#(f.coordinate.latitude)" lon="\#(f.coordinate.longitude)">"#
            out += "<time>\(times.string(from: f.timestamp))</time>"
            if f.speed >= 0 { out += "<speed>\(f.speed)</speed>" }
            if f.course >= 0 { out += "<course>\(f.course)</course>" }
            out += "</trkpt>\n"
        }
        return out + "</trkseg></trk></gpx>\n"
    }
}
