import AgentFormats
import Foundation
import GeofenceCore

/// The `track` payload (docs/topics.md#track): a batch of live updates as delta-encoded integers, about
/// 25 bytes a fix where `location` takes 250.
///
///     {"sequence":812,"vehicle":"v1","t0":1767225600.0,"p":[[0,52000000,5000000,5,120,90,0],[10,12,-3,5,121,90,0]]}
///
/// Each point is `[dt, dlat, dlon, accuracy, speed, course, stationary]`: dt in tenths of a second since the
/// previous point (the first: since `t0`, epoch seconds); dlat and dlon in millionths of a degree (0.11 m),
/// the first point's absolute, each next one's the change; accuracy in whole metres (1-sigma, rounded up),
/// speed in tenths of a metre a second and course in whole degrees, each -1 when unknown; stationary 0 or 1.
public enum TrackEncoding {
    /// One point in the batch's integers.
    public struct Point: Sendable, Equatable {
        public var time: Date
        public var latitude: Int
        public var longitude: Int
        public var accuracy: Int
        public var speed: Int
        public var course: Int
        public var stationary: Bool

        public init(_ update: LiveUpdate) {
            let l = update.location
            time = l.timestamp
            latitude = Int((l.coordinate.latitude * 1e6).rounded())
            longitude = Int((l.coordinate.longitude * 1e6).rounded())
            accuracy = l.horizontalAccuracy < 0 ? -1 : Int(l.horizontalAccuracy.rounded(.up))
            speed = l.speed < 0 ? -1 : Int((l.speed * 10).rounded())
            course = l.course < 0 ? -1 : Int(l.course.rounded()) % 360
            stationary = update.isStationary
        }

        public init(
            time: Date, latitude: Int, longitude: Int, accuracy: Int, speed: Int, course: Int, stationary: Bool
        ) {
            self.time = time
            self.latitude = latitude
            self.longitude = longitude
            self.accuracy = accuracy
            self.speed = speed
            self.course = course
            self.stationary = stationary
        }
    }

    /// The payload of one batch.
    public static func encode(_ points: [Point], vehicle: String, sequence: Int64) -> [UInt8] {
        guard let first = points.first else { return [] }
        // Tenths of a second: the first point's time is t0, exact to the tenth.
        let t0 = (first.time.timeIntervalSince1970 * 10).rounded(.down) / 10
        var text = #"{"sequence":\#(sequence),"vehicle":"# + JSONLine.quote(vehicle) + #","t0":\#(t0),"p":["#
        var previous = (tenths: Int((t0 * 10).rounded()), latitude: 0, longitude: 0)
        for (index, p) in points.enumerated() {
            let tenths = Int((p.time.timeIntervalSince1970 * 10).rounded())
            if index > 0 { text += "," }
            text +=
                "[\(tenths - previous.tenths),\(p.latitude - previous.latitude),\(p.longitude - previous.longitude),"
                + "\(p.accuracy),\(p.speed),\(p.course),\(p.stationary ? 1 : 0)]"
            previous = (tenths, p.latitude, p.longitude)
        }
        text += "]}"
        return Array(text.utf8)
    }

    /// Reads a payload back (tests, and the reference for consumers).
    public static func decode(_ payload: [UInt8]) -> (sequence: Int64, vehicle: String, points: [Point])? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
            let sequence = (object["sequence"] as? NSNumber)?.int64Value, let vehicle = object["vehicle"] as? String,
            let t0 = (object["t0"] as? NSNumber)?.doubleValue, let rows = object["p"] as? [[Int]]
        else { return nil }
        var tenths = Int((t0 * 10).rounded())
        var latitude = 0
        var longitude = 0
        var points: [Point] = []
        for row in rows {
            guard row.count == 7 else { return nil }
            tenths += row[0]
            latitude += row[1]
            longitude += row[2]
            points.append(
                Point(
                    time: Date(timeIntervalSince1970: Double(tenths) / 10), latitude: latitude, longitude: longitude,
                    accuracy: row[3], speed: row[4], course: row[5], stationary: row[6] != 0))
        }
        return (sequence, vehicle, points)
    }
}
