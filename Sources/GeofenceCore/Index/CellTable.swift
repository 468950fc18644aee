/// One condition's entry in a grid cell: its slot, an octagon that holds it, and an octagon it surely
/// covers (empty when none is known), both in the cell's steps. 20 bytes, so that a large index's
/// entries stay in cache, and most points are answered from here with no other read: inside the inner
/// octagon, or outside the outer one, which cuts off the corners of the box where a round region
/// leaves room.
struct CellEntry: Sendable {
    var slot: UInt32
    var outer: StepOctagon
    var inner: StepOctagon = .empty

    /// Steps per cell side.
    static let steps = 256.0
    /// Steps per sub-cell side of a `CellMask`.
    static let stepsPerSubcell = 256 / CellMask.side

    /// An entry that holds nothing, for unused room in the pool.
    static let filler = CellEntry(slot: 0, outer: .empty)

    init(slot: UInt32, outer: StepOctagon, inner: StepOctagon = .empty) {
        self.slot = slot
        self.outer = outer
        self.inner = inner
    }

    /// `outer` and `inner` are in fractions of the cell (0 at its west or south side, 1 at its east or
    /// north side). The outer octagon is rounded out and the inner one in, by enough that the rounding
    /// of a point's fractions to steps never changes an answer. The covered octagon is the larger of
    /// `inner` and the largest rectangle of sub-cells the mask says are inside.
    init(slot: UInt32, outer: Octagon, mask: CellMask = .unknown, inner: Octagon? = nil) {
        self.slot = slot
        self.outer = StepOctagon(around: outer)
        self.inner = inner.map { StepOctagon(within: $0) } ?? .empty
        // The mask's rectangle can win only if all its inside sub-cells together could.
        let n = Self.stepsPerSubcell
        guard mask.inside.nonzeroBitCount * n * n > self.inner.area, let r = mask.largestInsideRectangle() else {
            return
        }
        let rectangle = StepOctagon(
            minU: UInt8(r.i0 * n), minV: UInt8(r.j0 * n), maxU: UInt8(r.i1 * n + n - 1), maxV: UInt8(r.j1 * n + n - 1))
        if rectangle.area > self.inner.area { self.inner = rectangle }
    }

    /// A point's step in a cell, from its fraction of the cell (in [0, 1]).
    @inline(__always)
    static func step(_ fraction: Double) -> UInt8 { UInt8(min(Int(fraction * steps), Int(steps) - 1)) }
}

/// An octagon in a cell's steps: a box of steps, and bounds on half the sum of a point's steps and
/// on half their difference (offset by 256), so that every bound fits a byte.
///
/// A point at steps `u`, `v` has fractions in [u, u + 1) / 256 and [v, v + 1) / 256, so its true
/// 256 · (fu + fv) lies in [u + v, u + v + 2), and 256 · (fu − fv) + 256 within 1 of u − v + 256.
struct StepOctagon: Sendable {
    var minU: UInt8
    var minV: UInt8
    var maxU: UInt8
    var maxV: UInt8
    var sumLow: UInt8 = 0
    var sumHigh: UInt8 = 255
    var differenceLow: UInt8 = 0
    var differenceHigh: UInt8 = 255

    static let empty = StepOctagon(minU: 1, minV: 1, maxU: 0, maxV: 0)

    init(minU: UInt8, minV: UInt8, maxU: UInt8, maxV: UInt8) {
        self.minU = minU
        self.minV = minV
        self.maxU = maxU
        self.maxV = maxV
    }

    /// Steps that hold every point of an octagon in fractions: each side rounded out.
    init(around o: Octagon) {
        func step(_ x: Double, _ bias: Double) -> UInt8 {
            UInt8(min(max((x * CellEntry.steps).rounded(.down) + bias, 0), CellEntry.steps - 1))
        }
        self.init(
            minU: step(o.box.minLongitude, -1), minV: step(o.box.minLatitude, -1),
            maxU: step(o.box.maxLongitude, 1), maxV: step(o.box.maxLatitude, 1))
        // With t a bound in 256ths, every half-sum h with 2h >= ⌊t⌋ − 3 and 2h + 1 <= ⌈t⌉ + 3 passes:
        // a step more than a point's true value can differ from its steps' (under 2 for the sum, under
        // 1 for the difference).
        func low(_ t: Double) -> UInt8 { Self.byte(((t.rounded(.down) - 3) / 2).rounded(.down)) }
        func high(_ t: Double) -> UInt8 { Self.byte(((t.rounded(.up) + 2) / 2).rounded(.up)) }
        let s = o.sum
        let d = o.difference
        (sumLow, sumHigh) = (low(s.lowerBound * 256), high(s.upperBound * 256))
        (differenceLow, differenceHigh) = (low(d.lowerBound * 256 + 256), high(d.upperBound * 256 + 256))
    }

    /// Steps whose every point lies in an octagon in fractions: each side rounded in; `.empty` when
    /// none is left.
    init(within o: Octagon) {
        // Steps wholly inside [low, high]: a step s holds fractions [s, s + 1) / 256.
        func first(_ low: Double) -> Int { low <= 0 ? 0 : Int((low * CellEntry.steps).rounded(.up)) + 1 }
        func last(_ high: Double) -> Int {
            high >= 1 ? Int(CellEntry.steps) - 1 : Int((high * CellEntry.steps).rounded(.down)) - 2
        }
        let u0 = first(o.box.minLongitude)
        let v0 = first(o.box.minLatitude)
        let u1 = last(o.box.maxLongitude)
        let v1 = last(o.box.maxLatitude)
        guard u0 <= u1, v0 <= v1, u0 <= 255, v0 <= 255, u1 >= 0, v1 >= 0 else {
            self = .empty
            return
        }
        self.init(minU: UInt8(u0), minV: UInt8(v0), maxU: UInt8(u1), maxV: UInt8(v1))
        // A half-sum h passes only when 2h >= ⌈t⌉ + 3 and 2h + 1 <= ⌊t⌋ − 4, which leaves a step to spare
        // past what a point's true value can differ from its steps'; likewise for the difference.
        func low(_ t: Double) -> Double { ((t.rounded(.up) + 3) / 2).rounded(.up) }
        func high(_ t: Double) -> Double { ((t.rounded(.down) - 5) / 2).rounded(.down) }
        let s = o.sum
        let d = o.difference
        let bounds = [
            low(s.lowerBound * 256), high(s.upperBound * 256), low(d.lowerBound * 256 + 256),
            high(d.upperBound * 256 + 256),
        ]
        guard bounds[0] <= bounds[1], bounds[2] <= bounds[3], bounds[0] <= 255, bounds[2] <= 255, bounds[1] >= 0,
            bounds[3] >= 0
        else {
            self = .empty
            return
        }
        (sumLow, sumHigh, differenceLow, differenceHigh) = (
            Self.byte(bounds[0]), Self.byte(bounds[1]), Self.byte(bounds[2]), Self.byte(bounds[3])
        )
    }

    /// A bound clamped into a byte; infinities too.
    private static func byte(_ x: Double) -> UInt8 { x.isNaN ? 0 : UInt8(min(max(x, 0), 255)) }

    /// A point's half-sum and half-difference of steps, as this type's bounds expect.
    @inline(__always)
    static func diagonals(u: UInt8, v: UInt8) -> (sum: UInt8, difference: UInt8) {
        (UInt8(truncatingIfNeeded: (Int(u) + Int(v)) >> 1), UInt8(truncatingIfNeeded: (Int(u) - Int(v) + 256) >> 1))
    }

    /// Whether the octagon holds a point at these steps and diagonals: the definition, which the per-fix
    /// path computes as `holds(_:)`.
    @inline(__always)
    func holds(u: UInt8, v: UInt8, sum: UInt8, difference: UInt8) -> Bool {
        u >= minU && u <= maxU && v >= minV && v <= maxV
            && sum >= sumLow && sum <= sumHigh && difference >= differenceLow && difference <= differenceHigh
    }

    /// Lanes whose bound is an upper one, in the order of the bounds: flipping both sides of
    /// such a lane turns `x <= bound` into `~x >= ~bound`, so that one unsigned comparison of all eight
    /// lanes tests the whole octagon with no branch.
    static let upperLanes = SIMD8<UInt8>(0, 0, 0xFF, 0xFF, 0, 0xFF, 0, 0xFF)

    /// A point's steps laid out against the bounds, upper lanes flipped: for `holds(_:)`.
    @inline(__always)
    static func probe(u: UInt8, v: UInt8, sum: UInt8, difference: UInt8) -> SIMD8<UInt8> {
        SIMD8(u, v, u, v, sum, sum, difference, difference) ^ upperLanes
    }

    /// `holds(u:v:sum:difference:)` for a `probe`, without branches.
    @inline(__always)
    func holds(_ probe: SIMD8<UInt8>) -> Bool {
        let bounds = SIMD8(minU, minV, maxU, maxV, sumLow, sumHigh, differenceLow, differenceHigh) ^ Self.upperLanes
        return all(probe .>= bounds)
    }

    /// Its area in square steps, roughly (the box less its cut corners): which of two covered shapes
    /// is larger.
    var area: Int {
        guard minU <= maxU, minV <= maxV else { return 0 }
        let u0 = Int(minU)
        let v0 = Int(minV)
        let u1 = Int(maxU) + 1
        let v1 = Int(maxV) + 1
        // How far each diagonal bound cuts into its corner of the box, in steps of u + v or u − v.
        let cuts = [
            u1 + v1 - (2 * Int(sumHigh) + 2), 2 * Int(sumLow) - (u0 + v0),
            u1 - v0 + 256 - (2 * Int(differenceHigh) + 2), 2 * Int(differenceLow) - (u0 - v1 + 256),
        ]
        let side = min(u1 - u0, v1 - v0)
        let lost = cuts.reduce(0) { total, cut in
            let depth = min(max(cut, 0), side)
            return total + depth * depth / 2
        }
        return max((u1 - u0) * (v1 - v0) - lost, 0)
    }
}

/// An open-addressing hash table from a grid cell's key to that cell's entries.
///
/// A lookup costs one probe into `buckets` and one read of the cell's entries, which lie together in
/// a shared pool; Swift's `Dictionary` of arrays would add SipHash and two more dependent loads. The
/// entries' masks lie in a parallel pool, read only for an entry whose box holds the point.
struct CellTable: Sendable {
    struct Bucket: Sendable {
        var key: UInt64
        var start: UInt32
        var count: UInt32
        var capacity: UInt32
    }

    /// Where a cell's entries lie in the pool.
    struct Span: Sendable {
        var start: UInt32
        var count: UInt32
    }

    /// Every cell's span, row by row over the rectangle of columns and rows that holds all occupied
    /// cells: when the cells are that compact, a lookup reads one 8-byte span at a computed place
    /// instead of probing a hash table three times its size, which keeps a large index's hot data in
    /// cache. Exists only while every bucket's cell lies inside the rectangle.
    struct Directory: Sendable {
        var column0: Int
        var row0: Int
        var width: Int
        var height: Int
        var spans: [Span]

        @inline(__always)
        func index(of key: UInt64) -> Int? {
            let c = Int(truncatingIfNeeded: key & 0xFFFF_FFFF) - column0
            let r = Int(truncatingIfNeeded: key >> 32) - row0
            guard c >= 0, c < width, r >= 0, r < height else { return nil }
            return r * width + c
        }
    }

    /// A directory may have this many cells per occupied cell (or up to `directoryMinimum` in all).
    static let directorySlack = 8
    static let directoryMinimum = 1 << 16

    private static let empty = UInt64.max
    private var buckets: [Bucket]
    private var directory: Directory?
    private var pool: ContiguousArray<CellEntry> = []
    private var masks: ContiguousArray<CellMask> = []
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
        buckets.withUnsafeBufferPointer { b in
            let mask = b.count - 1
            var i = home(key)
            while true {
                let k = b[i].key
                if k == key { return i }
                if k == Self.empty { return nil }
                i = (i + 1) & mask
            }
        }
    }

    /// Where a cell's entries lie, through the directory when there is one.
    @inline(__always)
    private func span(of key: UInt64) -> Span? {
        if let directory {
            guard let d = directory.index(of: key) else { return nil }
            return directory.spans.withUnsafeBufferPointer { $0[d] }
        }
        guard let i = find(key) else { return nil }
        let b = buckets[i]
        return Span(start: b.start, count: b.count)
    }

    /// Calls `body` with each entry of a cell and its mask.
    @inline(__always)
    func forEach(in key: UInt64, _ body: (CellEntry, CellMask) -> Void) {
        guard let b = span(of: key) else { return }
        // Locals, so that the closures below capture two arrays rather than a copy of the whole table.
        let pool = self.pool
        let masks = self.masks
        pool.withUnsafeBufferPointer { p in
            masks.withUnsafeBufferPointer { m in
                for k in Int(b.start)..<Int(b.start + b.count) { body(p[k], m[k]) }
            }
        }
    }

    /// Calls `body` with the slot of each entry of a cell that may hold a point (at steps `u`, `v` and
    /// in the sub-cell `bit`), and whether it surely does. The mask is read only when the entry's
    /// octagons do not already answer: inside the inner one, or outside the outer one.
    @inline(__always)
    func forEach(in key: UInt64, u: UInt8, v: UInt8, bit: UInt64, _ body: (UInt32, _ surelyInside: Bool) -> Void) {
        guard let b = span(of: key) else { return }
        // Locals, as above: a closure reading `self.masks` took a copy of the whole table on every query.
        let pool = self.pool
        let masks = self.masks
        pool.withUnsafeBufferPointer { p in
            masks.withUnsafeBufferPointer { m in
                let (s, d) = StepOctagon.diagonals(u: u, v: v)
                let probe = StepOctagon.probe(u: u, v: v, sum: s, difference: d)
                for k in Int(b.start)..<Int(b.start + b.count) {
                    let e = p[k]
                    // Both tests, without a branch each: at 100,000 conditions which of them holds is
                    // unpredictable, and a mispredicted branch costs more than the second test.
                    let inner = e.inner.holds(probe)
                    let outer = e.outer.holds(probe)
                    if inner {
                        body(e.slot, true)
                    } else if outer {
                        let mask = m[k]
                        if mask.inside & bit != 0 {
                            body(e.slot, true)
                        } else if mask.boundary & bit != 0 {
                            body(e.slot, false)
                        }
                    }
                }
            }
        }
    }

    mutating func insert(_ entry: CellEntry, mask: CellMask, in key: UInt64) {
        let i = bucket(for: key)
        if buckets[i].count == buckets[i].capacity { relocate(i, capacity: max(buckets[i].capacity * 2, 2)) }
        let k = Int(buckets[i].start + buckets[i].count)
        pool[k] = entry
        masks[k] = mask
        buckets[i].count += 1
        mirror(i)
    }

    /// Copies a bucket's span into the directory.
    @inline(__always)
    private mutating func mirror(_ i: Int) {
        guard directory != nil else { return }
        let b = buckets[i]
        guard let d = directory!.index(of: b.key) else {
            directory = nil
            return
        }
        directory!.spans[d] = Span(start: b.start, count: b.count)
    }

    /// Counts one more entry to come for a cell, before `allocateReserved()`: building in two passes
    /// gives every cell a chunk of exactly its size, with no growth and no garbage.
    mutating func reserve(in key: UInt64) {
        let i = bucket(for: key)
        buckets[i].capacity += 1
    }

    /// Lays out a chunk for each cell's reserved entries: row by row through a directory when the
    /// occupied cells are compact enough for one (neighbouring cells' entries then lie together too),
    /// else in bucket order.
    mutating func allocateReserved() {
        let filler = CellEntry.filler
        let fresh = buckets.indices.filter {
            buckets[$0].key != Self.empty && buckets[$0].count == 0 && buckets[$0].capacity > 0
        }
        var total = pool.count
        func allocate(_ i: Int) {
            buckets[i].start = UInt32(total)
            total += Int(buckets[i].capacity)
        }
        if pool.isEmpty, let made = makeDirectory() {
            directory = made
            for r in 0..<made.height {
                for c in 0..<made.width {
                    if let i = find(Self.key(column: made.column0 + c, row: made.row0 + r)) { allocate(i) }
                }
            }
        } else {
            for i in fresh { allocate(i) }
        }
        pool.append(contentsOf: repeatElement(filler, count: total - pool.count))
        masks.append(contentsOf: repeatElement(.unknown, count: total - masks.count))
        for i in buckets.indices where buckets[i].key != Self.empty { mirror(i) }
    }

    /// A directory over the rectangle of occupied cells, if it is small enough.
    private func makeDirectory() -> Directory? {
        var c0 = Int.max
        var c1 = Int.min
        var r0 = Int.max
        var r1 = Int.min
        for b in buckets where b.key != Self.empty {
            let c = Int(truncatingIfNeeded: b.key & 0xFFFF_FFFF)
            let r = Int(truncatingIfNeeded: b.key >> 32)
            c0 = min(c0, c)
            c1 = max(c1, c)
            r0 = min(r0, r)
            r1 = max(r1, r)
        }
        guard c0 <= c1 else { return nil }
        let width = c1 - c0 + 1
        let height = r1 - r0 + 1
        guard width * height <= max(Self.directoryMinimum, count * Self.directorySlack) else { return nil }
        return Directory(
            column0: c0, row0: r0, width: width, height: height,
            spans: Array(repeating: Span(start: 0, count: 0), count: width * height))
    }

    @inline(__always)
    static func key(column: Int, row: Int) -> UInt64 { SpatialIndex.key(column: column, row: row) }

    /// The bucket of a cell, made (empty, with no chunk) if the cell is new.
    private mutating func bucket(for key: UInt64) -> Int {
        if let i = find(key) { return i }
        if (count + 1) * 4 > buckets.count * 3 { grow() }
        let mask = buckets.count - 1
        var i = home(key)
        while buckets[i].key != Self.empty { i = (i + 1) & mask }
        buckets[i] = Bucket(key: key, start: UInt32(pool.count), count: 0, capacity: 0)
        count += 1
        if let directory, directory.index(of: key) == nil { self.directory = nil }
        return i
    }

    /// Removes a slot's entry from a cell; an emptied cell keeps its key until the next growth.
    mutating func remove(_ slot: UInt32, from key: UInt64) {
        guard let i = find(key) else { return }
        let b = buckets[i]
        for k in Int(b.start)..<Int(b.start + b.count) where pool[k].slot == slot {
            let last = Int(b.start + b.count - 1)
            pool[k] = pool[last]
            masks[k] = masks[last]
            buckets[i].count -= 1
            mirror(i)
            return
        }
    }

    /// Moves a cell's entries to a larger chunk at the end of the pool.
    private mutating func relocate(_ i: Int, capacity: UInt32) {
        let b = buckets[i]
        let start = pool.count
        // Element by element: appending a slice of the pool to itself would copy the whole pool.
        for k in Int(b.start)..<Int(b.start + b.count) {
            pool.append(pool[k])
            masks.append(masks[k])
        }
        let filler = CellEntry.filler
        for _ in b.count..<capacity {
            pool.append(filler)
            masks.append(.unknown)
        }
        garbage += Int(b.capacity)
        buckets[i].start = UInt32(start)
        buckets[i].capacity = capacity
        mirror(i)
        if garbage > pool.count / 4 { compact() }
    }

    /// Rewrites the pool with only live chunks, cells in bucket order.
    private mutating func compact() {
        var freshPool = ContiguousArray<CellEntry>()
        var freshMasks = ContiguousArray<CellMask>()
        freshPool.reserveCapacity(pool.count - garbage)
        freshMasks.reserveCapacity(pool.count - garbage)
        for i in buckets.indices where buckets[i].key != Self.empty {
            let b = buckets[i]
            let start = freshPool.count
            freshPool.append(contentsOf: pool[Int(b.start)..<Int(b.start + b.capacity)])
            freshMasks.append(contentsOf: masks[Int(b.start)..<Int(b.start + b.capacity)])
            buckets[i].start = UInt32(start)
            mirror(i)
        }
        pool = freshPool
        masks = freshMasks
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
            if b.count == 0 && b.capacity > 0 && Int(b.start) < pool.count {
                garbage += Int(b.capacity)
                continue
            }
            var j = home(b.key)
            while buckets[j].key != Self.empty { j = (j + 1) & mask }
            buckets[j] = b
            count += 1
        }
        if garbage > pool.count / 4 { compact() }
    }
}
