import Foundation
import GeofenceCore

/// A monitor's last accepted fix as stored in `monitors.last_fix`: the JSON that `Location`'s `Codable`
/// conformance reads (dates as seconds since 2001, as `JSONEncoder` writes them by default), written by
/// hand because `JSONEncoder` took 60–80 µs of each transition's commit.
enum LastFixJSON {
    static func encode(_ fix: Location) -> [UInt8] {
        let doubles =
            [
                fix.coordinate.latitude, fix.coordinate.longitude, fix.horizontalAccuracy, fix.verticalAccuracy,
                fix.speed, fix.speedAccuracy, fix.course, fix.courseAccuracy,
                fix.timestamp.timeIntervalSinceReferenceDate,
            ]
            + [fix.altitudeHAE, fix.altitudeMSL, fix.climb, fix.gpsTime?.timeIntervalSinceReferenceDate].compactMap {
                $0
            }
        // JSON has no NaN or infinity; Foundation's encoder states the error for a value it cannot write.
        guard doubles.allSatisfy(\.isFinite) else { return Array((try? JSONEncoder().encode(fix)) ?? Data()) }
        var fields = [
            "\"coordinate\":{\"latitude\":\(fix.coordinate.latitude),\"longitude\":\(fix.coordinate.longitude)}",
            "\"horizontalAccuracy\":\(fix.horizontalAccuracy)", "\"verticalAccuracy\":\(fix.verticalAccuracy)",
            "\"speed\":\(fix.speed)", "\"speedAccuracy\":\(fix.speedAccuracy)",
            "\"course\":\(fix.course)", "\"courseAccuracy\":\(fix.courseAccuracy)",
            "\"timestamp\":\(fix.timestamp.timeIntervalSinceReferenceDate)", "\"mode\":\(fix.mode.rawValue)",
        ]
        if let v = fix.altitudeHAE { fields.append("\"altitudeHAE\":\(v)") }
        if let v = fix.altitudeMSL { fields.append("\"altitudeMSL\":\(v)") }
        if let v = fix.climb { fields.append("\"climb\":\(v)") }
        if let v = fix.gpsTime { fields.append("\"gpsTime\":\(v.timeIntervalSinceReferenceDate)") }
        if let v = fix.receivedAtNanoseconds { fields.append("\"receivedAtNanoseconds\":\(v)") }
        if let v = fix.satellitesUsed { fields.append("\"satellitesUsed\":\(v)") }
        if let v = fix.device { fields.append("\"device\":\(JSONValue.quoted(v))") }
        return Array("{\(fields.joined(separator: ","))}".utf8)
    }
}
