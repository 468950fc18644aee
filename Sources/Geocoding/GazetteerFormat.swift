/// The gazetteer file that scripts/build-gazetteer.py writes (docs/geocoding.md), stored uncompressed and
/// laid out to be read in place, from a mapping of the file:
///
///     "GFGZ", version, places, name keys, countries, rings, vertices, time zones, string bytes, area names
///     (u32 each), padded to `cardsOffset` (so that each card is one cache line of a page-aligned mapping),
///     then, each padded to 8 bytes, little-endian:
///       places' cards (in implicit k-d tree order), `cardBytes` each: latitude, longitude (i32,
///         microdegrees), population (u32), country, time zone (u16 indices), clearance (u16: bit 15 when
///         no outline holds the place, the low bits how far a point may be from it, as a chord in
///         `clearanceUnit` metres, and still lie in the outlines that hold it; 0: test the outlines), first-
///         and second-level area (u16 indices into the area names, `noArea`: none), then the name: its
///         length (u8) and UTF-8 when it fits the card, else `nameElsewhere`, a pad byte and the u32 offset
///         of the name in the strings;
///       each place's country again (u16), for the search within a country;
///       each place's ECEF x, y, z (i32 centimetres, the k-d tree's coordinates);
///       name keys (u64, ascending): the name's hash in the top 46 bits, the place in the low 18;
///       countries: ISO codes (2 bytes each), names (u32 string offsets), ring ranges (u32 pairs);
///       ring starts (u32 vertex index, bit 31 for a hole); vertices (i32 longitude and latitude pairs,
///       microdegrees); time zones (u32 string offsets, all ones: none);
///       clean cells (u8, `gridColumns` × `gridRows` cells of `gridDegrees`, rows from the south, columns from
///       180° W: 0 when a border or coast touches the cell, 1 when no outline holds it, 2 + a country's index
///       when that country's outline holds all of it);
///       area names (u32 string offsets);
///       strings: each a u16 length and its UTF-8.
enum GazetteerFormat {
    static let magic: [UInt8] = Array("GFGZ".utf8)
    static let version: UInt32 = 4
    static let headerSize = 40
    static let cardsOffset = 64
    static let hashBits = 46
    static let idBits = 18
    static let none = UInt32.max
    static let clearanceUnit = 8.0
    static let clearanceNoHolder: UInt16 = 0x8000
    static let cardBytes = 64
    static let cardNameOffset = 22
    static let nameElsewhere = 255
    static let noArea: UInt16 = 0xFFFF
    static let gridDegrees = 0.5
    static let gridColumns = 720
    static let gridRows = 360

    /// The file's sections, checked to lie inside it (see above), as tables over its bytes.
    struct Sections {
        let placeCount: Int, countries: Int
        let cards: UnsafeRawBufferPointer
        let countryIndex: GazetteerTable<UInt16>
        let positions: GazetteerTable<Int32>
        let keys: GazetteerTable<UInt64>
        let codeBytes: GazetteerTable<UInt8>
        let countryNameOffsets: GazetteerTable<UInt32>
        let countryRings: GazetteerTable<UInt32>
        let ringStarts: GazetteerTable<UInt32>
        let vertices: GazetteerTable<Int32>
        let zoneOffsets: GazetteerTable<UInt32>
        let cleanCells: GazetteerTable<UInt8>
        let areaOffsets: GazetteerTable<UInt32>
        let strings: GazetteerTable<UInt8>

        init(_ r: Reader) throws(Invalid) {
            placeCount = Int(r.u32(at: 8))
            countries = Int(r.u32(at: 16))
            let keyCount = Int(r.u32(at: 12))
            let rings = Int(r.u32(at: 20))
            let vertexCount = Int(r.u32(at: 24))
            let zones = Int(r.u32(at: 28))
            let stringBytes = Int(r.u32(at: 32))
            let areas = Int(r.u32(at: 36))
            guard placeCount < 1 << idBits else {
                throw Invalid(description: "the gazetteer holds \(placeCount) places, more than its keys can name")
            }
            var at = cardsOffset
            (cards, at) = try r.bytes(at: at, length: placeCount * cardBytes)
            (countryIndex, at) = try r.table(UInt16.self, at: at, count: placeCount)
            (positions, at) = try r.table(Int32.self, at: at, count: 3 * placeCount)
            (keys, at) = try r.table(UInt64.self, at: at, count: keyCount)
            (codeBytes, at) = try r.table(UInt8.self, at: at, count: 2 * countries)
            (countryNameOffsets, at) = try r.table(UInt32.self, at: at, count: countries)
            (countryRings, at) = try r.table(UInt32.self, at: at, count: 2 * countries)
            (ringStarts, at) = try r.table(UInt32.self, at: at, count: rings)
            (vertices, at) = try r.table(Int32.self, at: at, count: 2 * vertexCount)
            (zoneOffsets, at) = try r.table(UInt32.self, at: at, count: zones)
            (cleanCells, at) = try r.table(UInt8.self, at: at, count: gridColumns * gridRows)
            (areaOffsets, at) = try r.table(UInt32.self, at: at, count: areas)
            (strings, _) = try r.table(UInt8.self, at: at, count: stringBytes)
        }
    }

    /// Why bytes are not a gazetteer.
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// Little-endian reads from a file's bytes, with bounds checked against them.
    struct Reader {
        let bytes: UnsafeRawBufferPointer

        /// Checks the header (magic and version) before anything is read, and that the bytes start at an
        /// address the tables can be read from in place.
        init(_ bytes: UnsafeRawBufferPointer) throws(Invalid) {
            guard bytes.count >= 8, bytes.prefix(4).elementsEqual(magic) else {
                throw Invalid(description: "not a gazetteer file (no GFGZ header)")
            }
            let version = bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
            guard version == GazetteerFormat.version else {
                throw Invalid(
                    description:
                        "gazetteer version \(version); this agent reads version \(GazetteerFormat.version) (scripts/setup rebuilds it)"
                )
            }
            guard bytes.count >= cardsOffset else { throw Invalid(description: "the gazetteer's header is truncated") }
            guard Int(bitPattern: bytes.baseAddress) % MemoryLayout<UInt64>.alignment == 0 else {
                throw Invalid(description: "the gazetteer's bytes are not aligned to 8 bytes in memory")
            }
            self.bytes = bytes
        }

        func u32(at offset: Int) -> UInt32 {
            bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        }

        /// `length` bytes from `offset`, checked to lie in the file, and the next section's offset.
        func bytes(at offset: Int, length: Int) throws(Invalid) -> (bytes: UnsafeRawBufferPointer, next: Int) {
            guard offset >= 0, length >= 0, offset + length <= bytes.count else {
                throw Invalid(
                    description:
                        "the gazetteer is truncated: a section of \(length) bytes at \(offset) runs past its \(bytes.count) bytes"
                )
            }
            return (UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)]), (offset + length + 7) & ~7)
        }

        /// `count` values of `T` in place from `offset` (a multiple of 8, as every section starts), and the
        /// next section's offset (padded to 8).
        func table<T: BitwiseCopyable>(_ type: T.Type, at offset: Int, count: Int) throws(Invalid) -> (
            values: GazetteerTable<T>, next: Int
        ) {
            let (section, next) = try bytes(at: offset, length: count * MemoryLayout<T>.stride)
            return (GazetteerTable(section, count: count), next)
        }
    }
}
