import GeofenceCore

/// Mutates payloads the way a careless or hostile sender would: flipped and inserted bytes, cut and
/// repeated pieces, spliced seeds, and tokens that parsers trip on. Seeded, so a run can be repeated.
struct PayloadMutator {
    var random: SplitMix64
    let seeds: [[UInt8]]

    /// Tokens that sit at parsers' edges: numbers at and past a Double's range, NaN, deep nesting, control
    /// characters, a NUL, other GeoJSON types, huge radii, reversed rings.
    static let tokens: [String] = [
        "1e308", "1e400", "-0", "NaN", "Infinity", "999999999999999999999999", "4.9e-324", "-1", "0", "null", "true",
        "\"\\u0000\"", "\"\\ud800\"", "[]", "{}", String(repeating: "[", count: 600), "\"\u{202E}\"",
        "{\"type\":\"Polygon\",\"coordinates\":[[[0,0],[0,0],[0,0],[0,0]]]}",
        "{\"type\":\"GeometryCollection\",\"geometries\":[]}",
        "\"radius\":1e9", "\"width\":-5", "\"dwell\":-1", "\"expires\":\"9999-99-99T99:99:99Z\"", "\"speedLimit\":0",
        "\"schedule\":{\"timeZone\":\"Mars/Olympus\"}", "\"monitor\":\"\"", "\"version\":1e300",
        "\"notify\":[\"enter\",7]",
        String(repeating: "9", count: 400),
    ]

    mutating func next() -> [UInt8] {
        var bytes = seeds[Int.random(in: 0..<seeds.count, using: &random)]
        for _ in 0..<Int.random(in: 1...4, using: &random) { mutate(&bytes) }
        return Array(bytes.prefix(64 * 1024))
    }

    private mutating func position(in bytes: [UInt8]) -> Int { Int.random(in: 0...bytes.count, using: &random) }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        switch Int.random(in: 0..<8, using: &random) {
        case 0 where !bytes.isEmpty:
            let i = Int.random(in: 0..<bytes.count, using: &random)
            bytes[i] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
        case 1:
            bytes.insert(UInt8.random(in: 0...255, using: &random), at: position(in: bytes))
        case 2 where !bytes.isEmpty:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...16, using: &random)))
        case 3 where !bytes.isEmpty:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let piece = bytes[start..<min(bytes.count, start + Int.random(in: 1...64, using: &random))]
            bytes.insert(contentsOf: Array(piece), at: position(in: bytes))
        case 4:
            bytes.insert(
                contentsOf: Array(Self.tokens[Int.random(in: 0..<Self.tokens.count, using: &random)].utf8),
                at: position(in: bytes))
        case 5:
            // A number replaced by a token: where values are, not between them.
            let digits = bytes.indices.filter { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[$0]) }
            guard let at = digits.randomElement(using: &random) else { return }
            var end = at
            while end < bytes.count,
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) || bytes[end] == UInt8(ascii: ".")
            { end += 1 }
            bytes.replaceSubrange(at..<end, with: Array(Self.tokens[Int.random(in: 0..<9, using: &random)].utf8))
        case 6:
            bytes = Array(bytes.prefix(position(in: bytes)))
        default:
            let other = seeds[Int.random(in: 0..<seeds.count, using: &random)]
            let cut = Int.random(in: 0...other.count, using: &random)
            bytes = Array(bytes.prefix(position(in: bytes))) + other[cut...]
        }
    }
}
