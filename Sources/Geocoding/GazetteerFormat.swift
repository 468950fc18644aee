/// The gazetteer file that scripts/build-gazetteer.py writes (docs/geocoding.md), stored uncompressed so
/// that loading is a read and a few copies:
///
///     "GFGZ", version, places, name keys, countries, rings, vertices, time zones, string bytes (u32 each),
///     then, each padded to 8 bytes, little-endian:
///       places (in implicit k-d tree order): latitude, longitude (i32, microdegrees), population (u32),
///         text (u32 offset of three strings in a row: name, admin1, admin2; empty: none), country, time
///         zone (u16 indices), then each place's ECEF x, y, z (i32 centimetres, the k-d tree's coordinates);
///       name keys (u64, ascending): the name's hash in the top 46 bits, the place in the low 18;
///       countries: ISO codes (2 bytes each), names (u32 string offsets), ring ranges (u32 pairs);
///       ring starts (u32 vertex index, bit 31 for a hole); vertices (i32 longitude and latitude pairs,
///       microdegrees); time zones (u32 string offsets, all ones: none);
///       strings: each a u16 length and its UTF-8.
enum GazetteerFormat {
    static let magic: [UInt8] = Array("GFGZ".utf8)
    static let version: UInt32 = 2
    static let headerSize = 40
    static let hashBits = 46
    static let idBits = 18
    static let none = UInt32.max

    /// Why bytes are not a gazetteer.
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// Little-endian reads from a file's bytes, with bounds checked against them.
    struct Reader {
        let bytes: UnsafeRawBufferPointer

        /// Checks the header (magic and version) before anything is read.
        init(_ bytes: UnsafeRawBufferPointer) throws(Invalid) {
            guard bytes.count >= 8, bytes.prefix(4).elementsEqual(magic) else { throw Invalid(description: "not a gazetteer file (no GFGZ header)") }
            let version = bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
            guard version == GazetteerFormat.version else {
                throw Invalid(description: "gazetteer version \(version); this agent reads version \(GazetteerFormat.version) (scripts/setup rebuilds it)")
            }
            guard bytes.count >= headerSize else { throw Invalid(description: "the gazetteer's header is truncated") }
            self.bytes = bytes
        }

        func u32(at offset: Int) -> UInt32 {
            bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        }

        /// `count` values of `T` from `offset`, and the next section's offset (padded to 8).
        func array<T: BitwiseCopyable>(_ type: T.Type, at offset: Int, count: Int) throws(Invalid) -> (values: [T], next: Int) {
            let length = count * MemoryLayout<T>.stride
            guard offset >= 0, count >= 0, offset + length <= bytes.count else {
                throw Invalid(description: "the gazetteer is truncated: a section of \(length) bytes at \(offset) runs past its \(bytes.count) bytes")
            }
            let values = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)]))
                initialized = count
            }
            return (values, (offset + length + 7) & ~7)
        }
    }
}
