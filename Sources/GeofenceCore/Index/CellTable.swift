/// One condition's entry in a grid cell: its box, rounded outward to `Float` so that a whole cell's
/// entries sit in a few cache lines, and its slot.
struct CellEntry: Sendable {
    var minLongitude: Float
    var minLatitude: Float
    var maxLongitude: Float
    var maxLatitude: Float
    var slot: UInt32

    init(box: BoundingBox, slot: UInt32) {
        minLongitude = Self.below(box.minLongitude)
        minLatitude = Self.below(box.minLatitude)
        maxLongitude = Self.above(box.maxLongitude)
        maxLatitude = Self.above(box.maxLatitude)
        self.slot = slot
    }

    static func below(_ x: Double) -> Float {
        let f = Float(x)
        return Double(f) > x ? f.nextDown : f
    }

    static func above(_ x: Double) -> Float {
        let f = Float(x)
        return Double(f) < x ? f.nextUp : f
    }

    /// Rounding is monotonic, so a point inside the exact box is inside this one too: only false
    /// positives, which the exact test after it removes.
    @inline(__always)
    func contains(longitude: Float, wrappedLongitude: Float, latitude: Float) -> Bool {
        latitude >= minLatitude && latitude <= maxLatitude
            && ((longitude >= minLongitude && longitude <= maxLongitude)
                || (wrappedLongitude >= minLongitude && wrappedLongitude <= maxLongitude))
    }
}

/// An open-addressing hash table from a grid cell's key to that cell's entries.
///
/// A lookup costs one probe into `buckets` and one read of the cell's entries, which lie together in
/// a shared pool; Swift's `Dictionary` of arrays would add SipHash and two more dependent loads.
struct CellTable: Sendable {
    struct Bucket: Sendable {
        var key: UInt64
        var start: UInt32
        var count: UInt32
        var capacity: UInt32
    }

    private static let empty = UInt64.max
    private var buckets: [Bucket]
    private var pool: ContiguousArray<CellEntry> = []
    /// Pool entries no cell uses any more (left behind when a cell moved to a larger chunk).
    private var garbage = 0
    private var shift: UInt64
    private(set) var count = 0

    init() {
        buckets = Array(repeating: Bucket(key: Self.empty, start: 0, count: 0, capacity: 0), count: 16)
        shift = 64 - 4
    }

    @inline(__always)
    private func home(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    @inline(__always)
    private func find(_ key: UInt64) -> Int? {
        let mask = buckets.count - 1
        var i = home(key)
        while true {
            let k = buckets[i].key
            if k == key { return i }
            if k == Self.empty { return nil }
            i = (i + 1) & mask
        }
    }

    /// Calls `body` with each entry of a cell.
    @inline(__always)
    func forEach(in key: UInt64, _ body: (CellEntry) -> Void) {
        guard let i = find(key) else { return }
        let b = buckets[i]
        pool.withUnsafeBufferPointer { p in
            for k in Int(b.start)..<Int(b.start + b.count) { body(p[k]) }
        }
    }

    mutating func insert(_ entry: CellEntry, in key: UInt64) {
        if let i = find(key) {
            if buckets[i].count == buckets[i].capacity { relocate(i, capacity: buckets[i].capacity * 2) }
            pool[Int(buckets[i].start + buckets[i].count)] = entry
            buckets[i].count += 1
            return
        }
        if (count + 1) * 4 > buckets.count * 3 { grow() }
        let mask = buckets.count - 1
        var i = home(key)
        while buckets[i].key != Self.empty { i = (i + 1) & mask }
        buckets[i] = Bucket(key: key, start: UInt32(pool.count), count: 1, capacity: 2)
        pool.append(entry)
        pool.append(entry)  // the spare place of a two-entry chunk
        count += 1
    }

    /// Removes a slot's entry from a cell; an emptied cell keeps its key until the next growth.
    mutating func remove(_ slot: UInt32, from key: UInt64) {
        guard let i = find(key) else { return }
        let b = buckets[i]
        for k in Int(b.start)..<Int(b.start + b.count) where pool[k].slot == slot {
            pool[k] = pool[Int(b.start + b.count - 1)]
            buckets[i].count -= 1
            return
        }
    }

    /// Moves a cell's entries to a larger chunk at the end of the pool.
    private mutating func relocate(_ i: Int, capacity: UInt32) {
        let b = buckets[i]
        let start = pool.count
        // Element by element: appending a slice of the pool to itself would copy the whole pool.
        for k in Int(b.start)..<Int(b.start + b.count) { pool.append(pool[k]) }
        for _ in b.count..<capacity { pool.append(pool[Int(b.start)]) }
        garbage += Int(b.capacity)
        buckets[i].start = UInt32(start)
        buckets[i].capacity = capacity
        if garbage > pool.count / 4 { compact() }
    }

    /// Rewrites the pool with only live chunks, cells in bucket order.
    private mutating func compact() {
        var fresh = ContiguousArray<CellEntry>()
        fresh.reserveCapacity(pool.count - garbage)
        for i in buckets.indices where buckets[i].key != Self.empty {
            let b = buckets[i]
            let start = fresh.count
            fresh.append(contentsOf: pool[Int(b.start)..<Int(b.start + b.capacity)])
            buckets[i].start = UInt32(start)
        }
        pool = fresh
        garbage = 0
    }

    private mutating func grow() {
        let old = buckets
        let capacity = buckets.count * 2
        buckets = Array(repeating: Bucket(key: Self.empty, start: 0, count: 0, capacity: 0), count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        count = 0
        let mask = capacity - 1
        for b in old where b.key != Self.empty {
            if b.count == 0 { garbage += Int(b.capacity); continue }
            var j = home(b.key)
            while buckets[j].key != Self.empty { j = (j + 1) & mask }
            buckets[j] = b
            count += 1
        }
        if garbage > pool.count / 4 { compact() }
    }
}
