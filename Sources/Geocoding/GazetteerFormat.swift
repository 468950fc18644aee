import Deflate

/// The gazetteer file that scripts/build-gazetteer.py writes (docs/geocoding.md):
///
///     "GFGZ", version (u32), inflated size (u32), then zlib's format of:
///     "GFGZ", version, places, name keys, countries, rings, vertices, time zones, string bytes (u32 each),
///     then, each padded to 8 bytes, little-endian:
///       places (in implicit k-d tree order): latitude, longitude (i32, microdegrees), population (u32),
///         name, admin1, admin2 (u32 string offsets, all ones: none), country, time zone (u16 indices);
///       name keys (u64, ascending): the name's hash in the top 46 bits, the place in the low 18;
///       countries: ISO codes (2 bytes each), names (u32 string offsets), ring ranges (u32 pairs);
///       ring starts (u32 vertex index, bit 31 for a hole); vertices (i32 pairs, microdegrees, each the step
///       from the ring's previous vertex); time zones (u32 string offsets);
///       strings: each a u16 length and its UTF-8.
enum GazetteerFormat {
    static let magic: [UInt8] = Array("GFGZ".utf8)
    static let version: UInt32 = 1
    static let hashBits = 46
    static let idBits = 18
    static let none = UInt32.max

    /// Why bytes are not a gazetteer.
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// The inflated contents of a gazetteer file.
    static func inflate(_ file: [UInt8]) throws(Invalid) -> [UInt8] {
        guard file.count >= 12, Array(file[0..<4]) == magic else { throw Invalid(description: "not a gazetteer file (no GFGZ header)") }
        let reader = Reader(file)
        let version = reader.u32(at: 4), size = Int(reader.u32(at: 8))
        guard version == Self.version else { throw Invalid(description: "gazetteer version \(version); this agent reads version \(Self.version)") }
        do {
            return try Deflate.decompress(Array(file[12...]), size: size)
        } catch {
            throw Invalid(description: "the gazetteer's data is damaged: \(error)")
        }
    }

    /// Little-endian reads from a byte array, with bounds checked against the array.
    struct Reader {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        func u32(at offset: Int) -> UInt32 {
            bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        }

        /// `count` values of `T` from `offset`, and the next section's offset (padded to 8).
        func array<T: BitwiseCopyable>(_ type: T.Type, at offset: Int, count: Int) throws(Invalid) -> (values: [T], next: Int) {
            let length = count * MemoryLayout<T>.stride
            guard offset >= 0, count >= 0, offset + length <= bytes.count else {
                throw Invalid(description: "the gazetteer is truncated: a section of \(length) bytes at \(offset) runs past its \(bytes.count) bytes")
            }
            let values = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
                bytes.withUnsafeBytes { raw in
                    UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)]))
                }
                initialized = count
            }
            return (values, (offset + length + 7) & ~7)
        }
    }
}
