import AgentFormats
import Foundation
import GeofenceCore

/// The `track` payload (docs/topics.md#track): a batch of live updates as columns of integers, each coded
/// as its changes' changes, about 18 bytes a driving fix where `location` takes 300.
///
///     {"sequence":812,"vehicle":"v1","t":[17672256000,10,0],"lat":[52000000,12,1],"lon":[5000000,-3,0],
///      "acc":[5,0,0],"speed":[120,1,-1],"course":[90,0,0],"stationary":[2]}
///
/// Columns: `t` in tenths of a second since the epoch; `lat` and `lon` in millionths of a degree (0.11 m);
/// `acc` the 1-sigma accuracy in whole metres (rounded up), `speed` in tenths of a metre a second, `course`
/// in whole degrees, each -1 when unknown. In each column the first value is the first fix's; after it, keep
/// a step that starts at 0, add each value to the step and the step to the previous fix's value. A vehicle
/// at a steady pace sends zeros. `stationary` lists the fixes (from 0) that are stationary, when any is;
/// `excursion` the fixes the motion check found pulled aside by multipath (no evidence for any decision).
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
        /// The motion check's verdict was `excursion`.
        public var excursion = false

        public init(_ update: LiveUpdate) {
            let l = update.location
            time = l.timestamp
            latitude = Int((l.coordinate.latitude * 1e6).rounded())
            longitude = Int((l.coordinate.longitude * 1e6).rounded())
            accuracy = l.horizontalAccuracy < 0 ? -1 : Int(l.horizontalAccuracy.rounded(.up))
            speed = l.speed < 0 ? -1 : Int((l.speed * 10).rounded())
            course = l.course < 0 ? -1 : Int(l.course.rounded()) % 360
            stationary = update.isStationary
            excursion = l.motionVerdict == .excursion
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

    /// The columns, in their order in the payload.
    static let columns = ["t", "lat", "lon", "acc", "speed", "course"]

    /// The payload of one batch.
    public static func encode(_ points: [Point], vehicle: String, sequence: Int64) -> [UInt8] {
        guard !points.isEmpty else { return [] }
        var text = #"{"sequence":\#(sequence),"vehicle":"# + JSONLine.quote(vehicle)
        let values: [[Int]] = [
            points.map { Int(($0.time.timeIntervalSince1970 * 10).rounded()) }, points.map(\.latitude),
            points.map(\.longitude), points.map(\.accuracy), points.map(\.speed), points.map(\.course),
        ]
        for (key, column) in zip(columns, values) {
            text += #","\#(key)":["# + changesOfChanges(column).map(String.init).joined(separator: ",") + "]"
        }
        let stationary = points.indices.filter { points[$0].stationary }
        if !stationary.isEmpty {
            text += #","stationary":["# + stationary.map(String.init).joined(separator: ",") + "]"
        }
        let excursions = points.indices.filter { points[$0].excursion }
        if !excursions.isEmpty {
            text += #","excursion":["# + excursions.map(String.init).joined(separator: ",") + "]"
        }
        text += "}"
        return Array(text.utf8)
    }

    /// The first value, then each change of the change from the value before.
    static func changesOfChanges(_ values: [Int]) -> [Int] {
        var coded: [Int] = []
        coded.reserveCapacity(values.count)
        var previous = (value: 0, step: 0)
        for (index, value) in values.enumerated() {
            if index == 0 {
                coded.append(value)
            } else {
                let step = value - previous.value
                coded.append(step - previous.step)
                previous.step = step
            }
            previous.value = value
        }
        return coded
    }

    /// The values back from `changesOfChanges`.
    static func values(_ coded: [Int]) -> [Int] {
        var values: [Int] = []
        values.reserveCapacity(coded.count)
        var step = 0
        for (index, x) in coded.enumerated() {
            if index == 0 {
                values.append(x)
            } else {
                step += x
                values.append(values[index - 1] + step)
            }
        }
        return values
    }

    /// Reads a payload back (tests, and the reference for consumers).
    public static func decode(_ payload: [UInt8]) -> (sequence: Int64, vehicle: String, points: [Point])? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
            let sequence = (object["sequence"] as? NSNumber)?.int64Value, let vehicle = object["vehicle"] as? String
        else { return nil }
        var decoded: [[Int]] = []
        for key in columns {
            guard let column = object[key] as? [Int], !column.isEmpty,
                column.count == decoded.first?.count ?? column.count
            else { return nil }
            decoded.append(values(column))
        }
        let stationary = Set(object["stationary"] as? [Int] ?? [])
        let excursions = Set(object["excursion"] as? [Int] ?? [])
        let points = decoded[0].indices.map { i in
            var point = Point(
                time: Date(timeIntervalSince1970: Double(decoded[0][i]) / 10), latitude: decoded[1][i],
                longitude: decoded[2][i], accuracy: decoded[3][i], speed: decoded[4][i], course: decoded[5][i],
                stationary: stationary.contains(i))
            point.excursion = excursions.contains(i)
            return point
        }
        return (sequence, vehicle, points)
    }
}
