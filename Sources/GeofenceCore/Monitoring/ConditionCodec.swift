import Foundation

/// A compact binary form of a `Condition` for the store: decoding skips GeoJSON parsing and geometry
/// validation (both were done when the condition was accepted), so 100,000 conditions restore quickly.
/// Little-endian; the first byte is the format version. Never change a shipped version: add one.
public enum ConditionCodec {
    /// 1: name, dwell, version. 2 adds minimumDuration (flag 8). 3 adds the rules: notify (flag 16, a u16
    /// mask of `EventKind.codecBit`), expires (flag 32, seconds since 1970) speedLimit (flag 64, km/h) and
    /// schedule (flag 128, its JSON as `Schedule.json` writes it). A condition is written in
    /// the lowest format that holds it, so a store stays readable by the releases before.
    static let formatVersion: UInt8 = 1
    static let formatVersionWithMinimumDuration: UInt8 = 2
    static let formatVersionWithRules: UInt8 = 3

    public struct DecodingError: Error, CustomStringConvertible {
        public var description: String
    }

    public static func encode(_ condition: Condition) -> [UInt8] {
        let rules = condition.rules
        var out: [UInt8] = [
            !rules.isEmpty
                ? formatVersionWithRules
                : condition.minimumDuration == nil ? formatVersion : formatVersionWithMinimumDuration
        ]
        out.reserveCapacity(64 + condition.vertexCount * 16)
        let flags: UInt8 =
            (condition.name != nil ? 1 : 0) | (condition.dwell != nil ? 2 : 0) | (condition.version != nil ? 4 : 0)
            | (condition.minimumDuration != nil ? 8 : 0) | (rules.notify != nil ? 16 : 0)
            | (rules.expires != nil ? 32 : 0) | (rules.speedLimit != nil ? 64 : 0)
            | (rules.schedule != nil ? 128 : 0)
        out.append(flags)
        if let name = condition.name {
            let bytes = Array(name.utf8)
            put(UInt32(bytes.count), &out)
            out += bytes
        }
        if let dwell = condition.dwell { put(dwell.bitPattern, &out) }
        if let version = condition.version { put(UInt64(bitPattern: version), &out) }
        if let minimumDuration = condition.minimumDuration { put(minimumDuration.bitPattern, &out) }
        if let notify = rules.notify { put(notify.reduce(UInt16(0)) { $0 | $1.codecBit }, &out) }
        if let expires = rules.expires { put(expires.timeIntervalSince1970.bitPattern, &out) }
        if let speedLimit = rules.speedLimit { put(speedLimit.bitPattern, &out) }
        if let schedule = rules.schedule {
            let bytes = Array(schedule.json.utf8)
            put(UInt32(bytes.count), &out)
            out += bytes
        }
        switch condition.geometry {
        case .circle(let center, let radius):
            out.append(0)
            put(center.latitude.bitPattern, &out)
            put(center.longitude.bitPattern, &out)
            put(radius.bitPattern, &out)
        case .polygon(let parts):
            out.append(1)
            put(UInt32(parts.count), &out)
            for rings in parts {
                put(UInt32(rings.count), &out)
                for ring in rings { putCoordinates(ring, &out) }
            }
        case .corridor(let line, let halfWidth):
            out.append(2)
            put(halfWidth.bitPattern, &out)
            putCoordinates(line, &out)
        }
        return out
    }

    /// Expiry times from 0001-01-01 to 9999-12-31 (UTC), the years RFC 3339 writes.
    static let expiryRange = -62_135_596_800.0...253_402_300_799.0

    public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> Condition {
        try decode(bytes[...])
    }

    /// Decodes from a slice of a larger buffer (a restore reads every blob into one).
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(DecodingError) -> Condition {
        var reader = Reader(bytes: bytes, offset: bytes.startIndex)
        let format = try reader.byte()
        guard (formatVersion...formatVersionWithRules).contains(format) else {
            throw DecodingError(description: "unknown condition format \(format)")
        }
        let flags = try reader.byte()
        guard format >= formatVersionWithMinimumDuration || flags & 8 == 0 else {
            throw DecodingError(description: "format 1 has no minimumDuration")
        }
        guard format >= formatVersionWithRules || flags & 240 == 0 else {
            throw DecodingError(description: "format \(format) has no rules")
        }
        var name: String?
        if flags & 1 != 0 {
            let n = Int(try reader.u32())
            name = String(decoding: try reader.bytes(n), as: UTF8.self)
        }
        // Numbers a corrupt row could hold and the reader never accepts (NaN, infinities, dates Foundation
        // cannot print) are refused.
        let dwell = flags & 2 != 0 ? try reader.number(in: 0...Double.greatestFiniteMagnitude, "dwell") : nil
        let version = flags & 4 != 0 ? Int64(bitPattern: try reader.u64()) : nil
        let minimumDuration =
            flags & 8 != 0 ? try reader.number(in: 0...Double.greatestFiniteMagnitude, "minimumDuration") : nil
        var rules = ConditionRules()
        if flags & 16 != 0 {
            let mask = UInt16(truncatingIfNeeded: try reader.integer(2))
            rules.notify = Set(EventKind.allCases.filter { mask & $0.codecBit != 0 })
        }
        if flags & 32 != 0 {
            rules.expires = Date(timeIntervalSince1970: try reader.number(in: Self.expiryRange, "expires"))
        }
        if flags & 64 != 0 { rules.speedLimit = try reader.number(in: .ulpOfOne...1000, "speedLimit") }
        if flags & 128 != 0 {
            let text = Array(try reader.bytes(Int(try reader.u32())))
            do {
                rules.schedule = try ScheduleParser.parse(try JSONParser.parse(text))
            } catch {
                throw DecodingError(description: "the stored schedule cannot be read: \(error)")
            }
        }
        // A corrupt row must be refused, not crash the restore: the shapes the regions' preparation relies
        // on are checked (O(n), unlike the full validation a new geofence gets).
        let geometry: ConditionGeometry
        switch try reader.byte() {
        case 0:
            let lat = Double(bitPattern: try reader.u64())
            let lon = Double(bitPattern: try reader.u64())
            let center = Coordinate(latitude: lat, longitude: lon)
            let radius = Double(bitPattern: try reader.u64())
            guard center.isValid, radius.isFinite, radius > 0 else {
                throw DecodingError(description: "a circle with a bad centre or radius")
            }
            geometry = .circle(center: center, radius: radius)
        case 1:
            let partCount = try reader.u32()
            if partCount == 1, reader.peekU32() == 1 {
                // One ring, no holes (most geofences): straight into the region's one vertex array.
                _ = try reader.u32()
                let region = Region.polygon(PolygonRegion(simpleRing: try reader.unwrappedRing(atLeast: 4)))
                guard reader.atEnd else {
                    throw DecodingError(description: "\(bytes.endIndex - reader.offset) bytes left over")
                }
                return Condition(
                    trustedRegion: region, name: name, dwell: dwell, version: version,
                    minimumDuration: minimumDuration, rules: rules)
            }
            var parts: [[[Coordinate]]] = []
            for _ in 0..<partCount {
                var rings: [[Coordinate]] = []
                for _ in 0..<(try reader.u32()) { rings.append(try reader.coordinates(atLeast: 4)) }
                guard !rings.isEmpty else { throw DecodingError(description: "a polygon part with no ring") }
                parts.append(rings)
            }
            guard !parts.isEmpty else { throw DecodingError(description: "a polygon with no part") }
            geometry = .polygon(parts: parts)
        case 2:
            let halfWidth = Double(bitPattern: try reader.u64())
            guard halfWidth.isFinite, halfWidth > 0 else {
                throw DecodingError(description: "a corridor with a bad width")
            }
            geometry = .corridor(line: try reader.coordinates(atLeast: 2), halfWidth: halfWidth)
        case let kind:
            throw DecodingError(description: "unknown geometry kind \(kind)")
        }
        guard reader.atEnd else {
            throw DecodingError(description: "\(bytes.endIndex - reader.offset) bytes left over")
        }
        return Condition(
            trustedGeometry: geometry, name: name, dwell: dwell, version: version, minimumDuration: minimumDuration,
            rules: rules)
    }

    private static func put<T: FixedWidthInteger>(_ v: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out += $0 }
    }

    private static func putCoordinates(_ points: [Coordinate], _ out: inout [UInt8]) {
        put(UInt32(points.count), &out)
        for p in points {
            put(p.latitude.bitPattern, &out)
            put(p.longitude.bitPattern, &out)
        }
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var offset: Int
        var atEnd: Bool { offset == bytes.endIndex }

        mutating func byte() throws(DecodingError) -> UInt8 {
            guard offset < bytes.endIndex else { throw DecodingError(description: "truncated") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func u32() throws(DecodingError) -> UInt32 { UInt32(truncatingIfNeeded: try integer(4)) }

        /// A Double in `range` (so finite), or an error naming the field.
        mutating func number(in range: ClosedRange<Double>, _ field: String) throws(DecodingError) -> Double {
            let value = Double(bitPattern: try u64())
            guard range.contains(value) else { throw DecodingError(description: "\(field) \(value) is out of range") }
            return value
        }
        mutating func u64() throws(DecodingError) -> UInt64 { try integer(8) }

        mutating func integer(_ width: Int) throws(DecodingError) -> UInt64 {
            guard offset + width <= bytes.endIndex else { throw DecodingError(description: "truncated") }
            var v: UInt64 = 0
            for i in 0..<width { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
            offset += width
            return v
        }

        mutating func bytes(_ n: Int) throws(DecodingError) -> ArraySlice<UInt8> {
            guard n >= 0, offset + n <= bytes.endIndex else { throw DecodingError(description: "truncated") }
            defer { offset += n }
            return bytes[offset..<offset + n]
        }

        /// The next u32, without reading past it; nil at the end.
        func peekU32() -> UInt32? {
            var copy = self
            return try? copy.u32()
        }

        /// A ring of at least `minimum` valid coordinates, unwrapped as `unwrapLongitudes` does.
        mutating func unwrappedRing(atLeast minimum: Int) throws(DecodingError) -> ContiguousArray<SIMD2<Double>> {
            let n = Int(try u32())
            guard n <= (bytes.endIndex - offset) / 16 else { throw DecodingError(description: "truncated") }
            guard n >= minimum else {
                throw DecodingError(description: "\(n) coordinates where at least \(minimum) are needed")
            }
            var ring = RingUnwrapper(capacity: n)
            for _ in 0..<n {
                let lat = Double(bitPattern: try u64())
                let lon = Double(bitPattern: try u64())
                guard Coordinate(latitude: lat, longitude: lon).isValid else {
                    throw DecodingError(description: "a coordinate out of range: \(lat), \(lon)")
                }
                ring.append(longitude: lon, latitude: lat)
            }
            return ring.finish()
        }

        /// A list of at least `minimum` valid coordinates.
        mutating func coordinates(atLeast minimum: Int) throws(DecodingError) -> [Coordinate] {
            let n = Int(try u32())
            guard n <= (bytes.endIndex - offset) / 16 else { throw DecodingError(description: "truncated") }
            guard n >= minimum else {
                throw DecodingError(description: "\(n) coordinates where at least \(minimum) are needed")
            }
            var points: [Coordinate] = []
            points.reserveCapacity(n)
            for _ in 0..<n {
                let lat = Double(bitPattern: try u64())
                let lon = Double(bitPattern: try u64())
                let point = Coordinate(latitude: lat, longitude: lon)
                guard point.isValid else {
                    throw DecodingError(description: "a coordinate out of range: \(lat), \(lon)")
                }
                points.append(point)
            }
            return points
        }
    }
}
