import CPrefetch
import GeofenceCore

/// One place as a lookup reads it: everything a placemark needs but its name.
struct PlaceRecord: Sendable {
    var latitudeMicro: Int32
    var longitudeMicro: Int32
    var population: UInt32
    var country: UInt16
    var zone: UInt16
    /// See `GazetteerFormat`: whether an outline holds the place, and how far around it that stays so.
    var clearance: UInt16
    /// Indices into the area names (`GazetteerFormat.noArea`: none).
    var admin1: UInt16
    var admin2: UInt16
}

extension PlaceRecord {
    var coordinate: Coordinate {
        Coordinate(latitude: Double(latitudeMicro) / 1e6, longitude: Double(longitudeMicro) / 1e6)
    }

    /// The chord (metres) within which a point lies in the same country outline as the place, or in none
    /// when the place lies in none: the builder measured it to the nearest border or coast. 0 when unknown.
    var clearanceMetres: Double {
        Double(clearance & ~GazetteerFormat.clearanceNoHolder) * GazetteerFormat.clearanceUnit
    }

    /// Whether no country's outline holds the place (nor, within `clearanceMetres`, any point).
    var isOutsideOutlines: Bool { clearance & GazetteerFormat.clearanceNoHolder != 0 }
}

/// The places' cards as the file lays them out (`GazetteerFormat.cardBytes` each, in k-d tree order), read
/// in place: in a mapping of the file, or the gazetteer's copy of it, each card is one cache line, so that a
/// placemark costs one cache miss, and that one can be prefetched by index while the search still runs.
/// Valid while the gazetteer keeps its bytes.
struct PlaceCards: @unchecked Sendable {
    // Points into bytes that are never written after they are read: safe to share.
    private let base: UnsafeRawPointer?
    let count: Int

    /// The cards at the start of `bytes`, which hold `count` of them.
    init(_ bytes: UnsafeRawBufferPointer, count: Int) {
        self.count = count
        base = bytes.baseAddress
    }

    subscript(_ place: Int) -> PlaceRecord {
        let card = base! + place * GazetteerFormat.cardBytes
        return PlaceRecord(
            latitudeMicro: card.loadUnaligned(fromByteOffset: 0, as: Int32.self).littleEndian,
            longitudeMicro: card.loadUnaligned(fromByteOffset: 4, as: Int32.self).littleEndian,
            population: card.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian,
            country: card.loadUnaligned(fromByteOffset: 12, as: UInt16.self).littleEndian,
            zone: card.loadUnaligned(fromByteOffset: 14, as: UInt16.self).littleEndian,
            clearance: card.loadUnaligned(fromByteOffset: 16, as: UInt16.self).littleEndian,
            admin1: card.loadUnaligned(fromByteOffset: 18, as: UInt16.self).littleEndian,
            admin2: card.loadUnaligned(fromByteOffset: 20, as: UInt16.self).littleEndian)
    }

    /// Where the place's name is: its UTF-8 in the card, or (when too long for it) the offset of the
    /// string in the gazetteer's strings.
    enum NameBytes {
        case inline(UnsafeRawBufferPointer)
        case elsewhere(UInt32)
    }

    func name(_ place: Int) -> NameBytes {
        let card = base! + place * GazetteerFormat.cardBytes
        let length = Int(card.load(fromByteOffset: GazetteerFormat.cardNameOffset, as: UInt8.self))
        if length == GazetteerFormat.nameElsewhere {
            return .elsewhere(
                card.loadUnaligned(fromByteOffset: GazetteerFormat.cardNameOffset + 2, as: UInt32.self).littleEndian)
        }
        return .inline(UnsafeRawBufferPointer(start: card + GazetteerFormat.cardNameOffset + 1, count: length))
    }

    /// Asks the cache for a place's card ahead of its use.
    @inline(__always)
    func prefetch(_ place: Int) {
        geofence_prefetch(base! + place * GazetteerFormat.cardBytes)
    }
}
