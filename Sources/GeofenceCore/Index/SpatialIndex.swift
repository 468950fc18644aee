import EveryCore

/// A hierarchical grid over lon/lat that finds the conditions whose bounding box holds a point
/// without scanning every condition.
///
/// Levels grow fourfold, from 1/4096° (about 27 m) to 4°. A condition lives on one level, the finest at
/// or above the index's *floor* whose cells are at least a quarter of its box, so it occupies at most 5×5
/// cells there; a point query reads one cell per populated level. The floor adapts to the data: it is the
/// coarsest level whose occupied cells still hold few entries, so a sparse fleet's fences (tens of metres to
/// kilometres, over a country) share one or two levels, and each query costs one or two probes, while dense
/// or tiny fences keep fine cells. Boxes wider than 16° go to a short list checked on every query.
///
/// A slot inserted with its region, not only its box, has tighter cell entries: an outer octagon that
/// cuts off its box's corners, an inner one it surely covers, and a `CellMask` in each cell. A query
/// inside the inner octagon or in a sub-cell the region surely covers is answered without the exact
/// test, and one outside the outer octagon or in a sub-cell surely outside it is not offered at all.
public struct SpatialIndex: Sendable {
    static let baseCellDegrees = 1.0 / 4096
    /// Each level's cells are 2^levelShift times larger than the previous level's.
    static let levelShift = 2
    /// The coarsest cell, 2^(2·7) / 4096 = 4°, still divides 360°, so cells line up across the antimeridian.
    static let levelCount = 8
    /// A box may be up to this many cells wide on its level (so it spans at most (span+1)² cells).
    static let span = 4.0
    /// The floor is the coarsest level whose occupied cells hold at most this many entries on average.
    static let entriesPerCellTarget = 16.0

    private var levels: [CellTable]
    private var population: [Int]
    /// Populated levels: the only ones a query visits.
    private var activeLevels: [Int] = []
    private var large: [UInt32] = []
    /// Each slot's box; nil when the slot holds nothing.
    private(set) var boxes: [BoundingBox?] = []
    /// Each slot's region when it was inserted with one, for its octagons and cell masks.
    private var shapes: [Region?] = []
    private var slotLevel: [Int8] = []
    private var stamps: [UInt32] = []
    private var stamp: UInt32 = 0
    /// Whether the cells hold only boxes for slots inserted with regions (`insertAll(regions:refineLater:)`):
    /// right, but without the octagons and masks that spare most exact tests, until `adopt(_:)`.
    public private(set) var needsRefinement = false
    /// Moves at every change of the tables, so that a refinement worked out before a change is refused.
    private var revision = 0
    /// The finest level in use, and when to reconsider it.
    private(set) var floor = 0
    private var stored = 0
    private var nextRebalance = 256

    /// Per level: cells per degree (a power of two, so cell indices are exact), columns and rows.
    private let inverseSizes: [Double] = (0..<levelCount).map { 1 / cellSize($0) }
    private let columnCounts: [Int] = (0..<levelCount).map { Int((360 / cellSize($0)).rounded()) }
    private let rowCounts: [Int] = (0..<levelCount).map { Int((180 / cellSize($0)).rounded()) }

    public init() {
        levels = Array(repeating: CellTable(), count: Self.levelCount)
        population = Array(repeating: 0, count: Self.levelCount)
    }

    public var count: Int { stored }

    @inline(__always)
    static func cellSize(_ level: Int) -> Double { baseCellDegrees * Double(1 << (levelShift * level)) }

    static func extent(_ box: BoundingBox) -> Double {
        max(box.maxLongitude - box.minLongitude, box.maxLatitude - box.minLatitude)
    }

    /// The level a box belongs on above a given floor, or nil for the list of very large boxes.
    static func level(for box: BoundingBox, floor: Int) -> Int? {
        let e = extent(box)
        for level in floor..<levelCount where span * cellSize(level) >= e { return level }
        return nil
    }

    @inline(__always)
    static func key(column: Int, row: Int) -> UInt64 {
        UInt64(truncatingIfNeeded: row) << 32 | UInt64(truncatingIfNeeded: column)
    }

    /// The cells of a level that a box overlaps.
    static func cells(of box: BoundingBox, level: Int) -> [UInt64] {
        placements(of: box, level: level).map(\.key)
    }

    /// The cells of a level that a box overlaps, each with its column before wrapping at the
    /// antimeridian (the frame the box's own longitudes are in) and its row.
    static func placements(of box: BoundingBox, level: Int) -> [(key: UInt64, column: Int, row: Int)] {
        var out: [(key: UInt64, column: Int, row: Int)] = []
        forEachCell(of: box, level: level) { out.append(($0, $1, $2)) }
        return out
    }

    /// Calls `body` with each cell of a level that a box overlaps (as `placements(of:level:)` lists them),
    /// without making a list.
    @inline(__always)
    static func forEachCell(
        of box: BoundingBox, level: Int, _ body: (_ key: UInt64, _ column: Int, _ row: Int) -> Void
    ) {
        let size = cellSize(level)
        let columns = Int((360 / size).rounded())
        let rows = Int((180 / size).rounded())
        let c0 = Int(((box.minLongitude + 180) / size).rounded(.down))
        let c1 = Int(((box.maxLongitude + 180) / size).rounded(.down))
        let r0 = min(max(Int(((box.minLatitude + 90) / size).rounded(.down)), 0), rows - 1)
        let r1 = min(max(Int(((box.maxLatitude + 90) / size).rounded(.down)), 0), rows - 1)
        for r in r0...r1 {
            for c in c0...max(c0, min(c1, c0 + columns - 1)) {
                body(key(column: ((c % columns) + columns) % columns, row: r), c, r)
            }
        }
    }

    /// Adds or replaces the box stored for a slot.
    public mutating func insert(slot: Int, box: BoundingBox) {
        record(slot, box, shape: nil)
        placeAndRebalance(slot, box)
    }

    /// Adds or replaces a slot's region: its box, and a mask in each of its cells.
    public mutating func insert(slot: Int, region: Region) {
        let box = region.boundingBox
        record(slot, box, shape: region)
        placeAndRebalance(slot, box)
    }

    private mutating func placeAndRebalance(_ slot: Int, _ box: BoundingBox) {
        place(slot, box)
        if stored >= nextRebalance {
            nextRebalance = stored * 2
            rebalance()
        }
    }

    /// Keeps a slot's box (replacing an older one), without placing it in the cells yet.
    private mutating func record(_ slot: Int, _ box: BoundingBox, shape: Region?) {
        if slot < boxes.count, boxes[slot] != nil { remove(slot: slot) }
        while boxes.count <= slot {
            boxes.append(nil)
            shapes.append(nil)
            slotLevel.append(-1)
            stamps.append(0)
        }
        boxes[slot] = box
        shapes[slot] = shape
        stored += 1
    }

    private mutating func place(_ slot: Int, _ box: BoundingBox) {
        revision += 1
        apply(slot, placement(of: slot, box))
    }

    /// Where a slot goes on the current floor, and what it puts in each cell there (its octagons and
    /// masks): worked out apart from the tables, so that a rebuild can work out every slot's at once on
    /// all cores. Nil for the list of very large boxes.
    private func placement(of slot: Int, _ box: BoundingBox) -> Placement? {
        guard let level = Self.level(for: box, floor: floor) else { return nil }
        let inverse = inverseSizes[level]
        let shape = shapes[slot]
        var outer = Octagon(box: box)
        if let diagonals = shape?.outerDiagonals() { (outer.sum, outer.difference) = diagonals }
        var inner = shape?.innerOctagon()
        if let found = inner {
            // Into the frame of the box, which may run past 180.
            let east =
                found.box.maxLongitude < box.minLongitude - 1
                ? 360.0 : found.box.minLongitude > box.maxLongitude + 1 ? -360 : 0
            inner = found.shifted(east: east)
        }
        var cells: [(key: UInt64, entry: CellEntry, mask: CellMask)] = []
        for (key, column, row) in Self.placements(of: box, level: level) {
            var mask = CellMask.unknown
            if let shape {
                mask = shape.mask(in: Self.gridCell(key: key, level: level))
                // The region does not reach into this cell at all.
                if mask.inside | mask.boundary == 0 { continue }
            }
            let entry = CellEntry(
                slot: UInt32(slot), outer: outer.inCell(inverse: inverse, column: column, row: row), mask: mask,
                inner: inner?.inCell(inverse: inverse, column: column, row: row))
            cells.append((key, entry, mask))
        }
        return Placement(level: level, cells: cells)
    }

    /// A slot's level and its entry in each cell it reaches there.
    fileprivate struct Placement: Sendable {
        var level: Int
        var cells: [(key: UInt64, entry: CellEntry, mask: CellMask)]
    }

    private mutating func apply(_ slot: Int, _ placement: Placement?) {
        guard let placement else {
            large.append(UInt32(slot))
            slotLevel[slot] = Int8(Self.levelCount)
            return
        }
        let level = placement.level
        slotLevel[slot] = Int8(level)
        for cell in placement.cells { levels[level].insert(cell.entry, mask: cell.mask, in: cell.key) }
        population[level] += 1
        if population[level] == 1 { activeLevels = (0..<Self.levelCount).filter { population[$0] > 0 } }
    }

    /// Places every stored slot in fresh tables on the current floor, counting each cell's entries
    /// first so that every cell gets one chunk of exactly its size. The slots' placements (their masks
    /// are a large part of a restore's work) are worked out on every core, then put in the tables in slot order,
    /// so the tables are the same as one by one.
    private mutating func placeAll(coarse: Bool = false) {
        let slots = boxes.indices.filter { boxes[$0] != nil }
        if coarse {
            fillWithBoxes(slots)
        } else {
            fill(slots, Self.placements(of: slots, in: self))
        }
        needsRefinement = coarse && shapes.contains { $0 != nil }
    }

    /// Fresh tables holding each slot's box alone (no octagons, masks "unknown"), as `placement(of:_:)` and
    /// `apply` would put a slot without a shape, worked out in place: a box's entries cost less to work out
    /// twice than a list of them costs to make.
    private mutating func fillWithBoxes(_ slots: [Int]) {
        revision += 1
        levels = Array(repeating: CellTable(), count: Self.levelCount)
        population = Array(repeating: 0, count: Self.levelCount)
        activeLevels = []
        large = []
        for slot in slots {
            let box = boxes[slot]!
            guard let level = Self.level(for: box, floor: floor) else { continue }
            Self.forEachCell(of: box, level: level) { key, _, _ in levels[level].reserve(in: key) }
        }
        for level in levels.indices { levels[level].allocateReserved() }
        for slot in slots {
            let box = boxes[slot]!
            guard let level = Self.level(for: box, floor: floor) else {
                large.append(UInt32(slot))
                slotLevel[slot] = Int8(Self.levelCount)
                continue
            }
            slotLevel[slot] = Int8(level)
            let inverse = inverseSizes[level]
            let outer = Octagon(box: box)
            Self.forEachCell(of: box, level: level) { key, column, row in
                let entry = CellEntry(
                    slot: UInt32(slot), outer: outer.inCell(inverse: inverse, column: column, row: row), mask: .unknown,
                    inner: nil)
                levels[level].insert(entry, mask: .unknown, in: key)
            }
            population[level] += 1
            if population[level] == 1 { activeLevels = (0..<Self.levelCount).filter { population[$0] > 0 } }
        }
    }

    /// Fresh tables holding these placements.
    private mutating func fill(_ slots: [Int], _ placements: [Placement?]) {
        revision += 1
        levels = Array(repeating: CellTable(), count: Self.levelCount)
        population = Array(repeating: 0, count: Self.levelCount)
        activeLevels = []
        large = []
        // Each cell's room, counted from the placements themselves (a cell a region does not reach gets none).
        for case let placement? in placements {
            for cell in placement.cells { levels[placement.level].reserve(in: cell.key) }
        }
        for level in levels.indices { levels[level].allocateReserved() }
        for (i, slot) in slots.enumerated() { apply(slot, placements[i]) }
    }

    /// Every slot's placement in `index`, a copy that is gone before the tables are filled (so they are not
    /// copied on write).
    private static func placements(of slots: [Int], in index: SpatialIndex) -> [Placement?] {
        workedOutOnEveryCore(slots.count) { i in index.placement(of: slots[i], index.boxes[slots[i]]!) }
    }

    public mutating func remove(slot: Int) {
        guard slot < boxes.count, let box = boxes[slot] else { return }
        revision += 1
        let level = Int(slotLevel[slot])
        if level == Self.levelCount {
            large.removeAll { $0 == UInt32(slot) }
        } else {
            for key in Self.cells(of: box, level: level) { levels[level].remove(UInt32(slot), from: key) }
            population[level] -= 1
            if population[level] == 0 { activeLevels = (0..<Self.levelCount).filter { population[$0] > 0 } }
        }
        boxes[slot] = nil
        shapes[slot] = nil
        slotLevel[slot] = -1
        stored -= 1
    }

    /// The finest level in use: worth keeping with the boxes, so that a rebuild can skip choosing it.
    public var floorLevel: Int { floor }

    /// Adds many boxes at once (a restore) and builds the index once, instead of rebalancing as it grows.
    /// `floor` (a `floorLevel` saved earlier) skips choosing the floor; any valid floor gives the same
    /// answers, only the speed differs.
    public mutating func insertAll(_ items: [(slot: Int, box: BoundingBox)], floor hint: Int? = nil) {
        for (slot, box) in items { record(slot, box, shape: nil) }
        build(floor: hint)
    }

    /// Adds many regions at once, with their cell masks, and builds the index once. With `refineLater` (a
    /// restore) the cells get only each region's box at first: the same answers, in a fraction of the time.
    /// `refinement()` and `adopt(_:)` then add the octagons and masks, most of a restore's work, off the
    /// path to the first fix.
    public mutating func insertAll(
        regions items: [(slot: Int, region: Region)], floor hint: Int? = nil, refineLater: Bool = false
    ) {
        let end = items.reduce(boxes.count) { max($0, $1.slot + 1) }
        boxes.reserveCapacity(end)
        shapes.reserveCapacity(end)
        slotLevel.reserveCapacity(end)
        stamps.reserveCapacity(end)
        for (slot, region) in items { record(slot, region.boundingBox, shape: region) }
        build(floor: hint, coarse: refineLater)
    }

    /// The same for a restore: each region comes with its box, worked out on the thread that decoded it, and
    /// is moved into the index, not copied (`items` is left without them). Retaining and reading 100,000
    /// regions decoded on other cores would cost a cache miss each.
    public mutating func insertAll(
        restored items: inout [(slot: Int, region: Region?, box: BoundingBox)], floor hint: Int? = nil,
        refineLater: Bool = false
    ) {
        let end = items.reduce(boxes.count) { max($0, $1.slot + 1) }
        boxes.reserveCapacity(end)
        shapes.reserveCapacity(end)
        slotLevel.reserveCapacity(end)
        stamps.reserveCapacity(end)
        for i in items.indices {
            let slot = items[i].slot
            record(slot, items[i].box, shape: nil)
            swap(&shapes[slot], &items[i].region)
        }
        build(floor: hint, coarse: refineLater)
    }

    /// What `adopt(_:)` puts in the tables: every slot's octagons and masks, worked out on every core.
    public struct Refinement: Sendable {
        fileprivate let revision: Int
        fileprivate let slots: [Int]
        fileprivate let placements: [Placement?]
    }

    /// The refinement an index built with `refineLater` waits for, or nil when it needs none. Pure: work it
    /// out on a copy, on any thread, while the index goes on answering.
    public func refinement() -> Refinement? {
        guard needsRefinement else { return nil }
        let slots = boxes.indices.filter { boxes[$0] != nil }
        return Refinement(revision: revision, slots: slots, placements: Self.placements(of: slots, in: self))
    }

    /// Puts a refinement in the tables; false, and nothing changed, when the index changed since it was
    /// worked out (work out another) or needs none any more.
    public mutating func adopt(_ refinement: Refinement) -> Bool {
        guard needsRefinement, refinement.revision == revision else { return false }
        fill(refinement.slots, refinement.placements)
        needsRefinement = false
        return true
    }

    private mutating func build(floor hint: Int?, coarse: Bool = false) {
        nextRebalance = max(nextRebalance, stored * 2)
        if let hint, (0..<Self.levelCount).contains(hint) {
            floor = hint
            placeAll(coarse: coarse)
        } else {
            rebalance(force: true, coarse: coarse)
        }
    }

    /// Picks the coarsest floor whose occupied cells hold few entries, and rebuilds if it changed.
    private mutating func rebalance(force: Bool = false, coarse: Bool = false) {
        let present = boxes.indices.filter { boxes[$0] != nil }
        var chosen = 0
        for candidate in (0..<Self.levelCount).reversed() {
            var cells = Set<UInt64>()
            var entries = 0
            for slot in present {
                let box = boxes[slot]!
                guard Self.level(for: box, floor: candidate) == candidate else { continue }
                let covered = Self.cells(of: box, level: candidate)
                entries += covered.count
                cells.formUnion(covered)
            }
            if cells.isEmpty || Double(entries) / Double(cells.count) <= Self.entriesPerCellTarget {
                chosen = candidate
                break
            }
        }
        guard chosen != floor || force else { return }
        floor = chosen
        placeAll(coarse: coarse)
    }

    /// Where a point lies on a level: its cell, its sub-cell's bit in a `CellMask`, and its step
    /// along each side of the cell, for `CellEntry`.
    @inline(__always)
    func locate(longitude: Double, latitude: Double, level: Int) -> (key: UInt64, bit: UInt64, u: UInt8, v: UInt8) {
        let inverse = inverseSizes[level]
        // Cells are a power of two of degrees wide, so `u - c` and the sub-cell are exact.
        let u = (longitude + 180) * inverse
        let v = (latitude + 90) * inverse
        var c = Int(u.rounded(.down))
        let r = min(Int(v.rounded(.down)), rowCounts[level] - 1)
        let fu = u - Double(c)
        let fv = v - Double(r)
        let bit = CellMask.bit(fractionU: fu, fractionV: fv)
        if c >= columnCounts[level] { c -= columnCounts[level] }
        return (Self.key(column: c, row: r), bit, CellEntry.step(fu), CellEntry.step(fv))
    }

    /// The cell a key names, in degrees.
    static func gridCell(key: UInt64, level: Int) -> GridCell {
        let size = cellSize(level)
        return GridCell(west: Double(key & 0xFFFF_FFFF) * size - 180, south: Double(key >> 32) * size - 90, size: size)
    }

    /// Calls `body` with every slot whose box holds the point, each once, except slots whose region
    /// surely does not.
    @inline(__always)
    public func forEachCandidate(longitude: Double, latitude: Double, _ body: (Int) -> Void) {
        forEachCandidate(longitude: longitude, latitude: latitude) { slot, _ in body(slot) }
    }

    /// The same, telling `body` also whether the slot's region surely holds the point (its inner
    /// octagon or its cell mask says so), so that the exact test can be skipped.
    @inline(__always)
    public func forEachCandidate(longitude: Double, latitude: Double, _ body: (Int, _ surelyInside: Bool) -> Void) {
        // Through a buffer pointer, so that no table is copied (and retained) per query.
        levels.withUnsafeBufferPointer { tables in
            for level in activeLevels {
                let (key, bit, u, v) = locate(longitude: longitude, latitude: latitude, level: level)
                tables[level].forEach(in: key, u: u, v: v, bit: bit) { slot, surelyInside in
                    body(Int(slot), surelyInside)
                }
            }
        }
        for slot in large where boxes[Int(slot)].unsafelyUnwrapped.contains(longitude: longitude, latitude: latitude) {
            body(Int(slot), false)
        }
    }

    /// Calls `body` once with every slot whose region may meet the lon/lat-straight segment from `a` to `b`:
    /// its box meets the segment's box, and in some cell the segment passes, its region reaches into a
    /// sub-cell the segment's box there touches. (Regions are tested on lon/lat-straight segments, or in
    /// projections affine in lon/lat, so a segment inside sub-cells a region does not reach misses it.)
    public mutating func forEachCandidate(alongSegmentFrom a: Coordinate, to b: Coordinate, _ body: (Int) -> Void) {
        stamp &+= 1
        if stamp == 0 {
            for i in stamps.indices { stamps[i] = 0 }
            stamp = 1
        }
        let x0 = a.longitude
        let y0 = a.latitude
        let x1 = a.longitude + wrappedLongitudeDelta(b.longitude - a.longitude)
        let y1 = b.latitude
        let west = min(x0, x1)
        let shift = west < -180 ? 360.0 : (west >= 180 ? -360.0 : 0)
        let segmentBox = BoundingBox(
            minLongitude: west + shift, minLatitude: min(y0, y1), maxLongitude: max(x0, x1) + shift,
            maxLatitude: max(y0, y1))
        func visit(_ slot: Int) {
            guard stamps[slot] != stamp else { return }
            stamps[slot] = stamp
            if let box = boxes[slot], box.intersects(segmentBox) { body(slot) }
        }
        // Through a buffer pointer, so that no table is copied (and retained) per cell.
        let levels = self.levels
        levels.withUnsafeBufferPointer { tables in
            for level in activeLevels {
                tables[level].walk(
                    inverse: inverseSizes[level],
                    columns: columnCounts[level], rows: rowCounts[level],
                    from: (x0, y0), to: (x1, y1)
                ) { visit($0) }
            }
        }
        for slot in large { visit(Int(slot)) }
    }
}

extension CellTable {
    /// Calls `visit` with the entries of this level's table that may meet the lon/lat-straight segment from
    /// `a` to `b` (longitudes unwrapped, within a turn of each other): the columns the segment passes, and
    /// in each the rows between its entry and exit. A method of the table, called on it in place (an
    /// element of the levels' buffer): a copy of the table, as `pointee` made, retained and released its four
    /// arrays at every cell. The caller's `visit` may mutate the index, which holds its own reference to
    /// the levels.
    @inline(__always)
    fileprivate func walk(
        inverse: Double, columns: Int, rows: Int,
        from a: (Double, Double), to b: (Double, Double), _ visit: (Int) -> Void
    ) {
        let u0 = (a.0 + 180) * inverse
        let u1 = (b.0 + 180) * inverse
        let v0 = (a.1 + 90) * inverse
        let v1 = (b.1 + 90) * inverse
        let cFirst = floorInt(min(u0, u1))
        let cLast = floorInt(max(u0, u1))
        for c in cFirst...cLast {
            let uLow = max(Double(c), min(u0, u1))
            let uHigh = min(Double(c + 1), max(u0, u1))
            let vLow: Double
            let vHigh: Double
            if cFirst == cLast {
                vLow = min(v0, v1)
                vHigh = max(v0, v1)
            } else {
                let vA = v0 + (uLow - u0) / (u1 - u0) * (v1 - v0)
                let vB = v0 + (uHigh - u0) / (u1 - u0) * (v1 - v0)
                vLow = min(vA, vB)
                vHigh = max(vA, vB)
            }
            let rFirst = min(max(floorInt(vLow), 0), rows - 1)
            let rLast = min(max(floorInt(vHigh), 0), rows - 1)
            // The segment's longitudes are within a turn of the grid's, so one wrap either way suffices.
            let column = c < 0 ? c + columns : c >= columns ? c - columns : c
            let (uMin, uMax) = SpatialIndex.stepRange(uLow - Double(c), uHigh - Double(c))
            for r in rFirst...rLast {
                // Only entries whose outer box meets the segment's box in this cell, and whose region reaches
                // into a sub-cell of that box: most do not, and they are answered from the entry and its mask,
                // without reading the slot's box or region.
                let (vMin, vMax) = SpatialIndex.stepRange(vLow - Double(r), vHigh - Double(r))
                let n = CellEntry.stepsPerSubcell
                let reach = CellMask.rectangle(
                    columns: Int(uMin) / n...Int(uMax) / n, rows: Int(vMin) / n...Int(vMax) / n)
                forEach(in: SpatialIndex.key(column: column, row: r)) { e, mask in
                    let o = e.outer
                    if o.minU <= uMax, o.maxU >= uMin, o.minV <= vMax, o.maxV >= vMin, o.minU <= o.maxU,
                        (mask.inside | mask.boundary) & reach != 0
                    {
                        visit(Int(e.slot))
                    }
                }
            }
        }
    }
}

extension SpatialIndex {
    /// The steps of a cell (0...255) that a span of fractions of it covers, rounded out.
    @inline(__always)
    static func stepRange(_ low: Double, _ high: Double) -> (UInt8, UInt8) {
        let lo = min(max(floorInt(low * CellEntry.steps), 0), Int(CellEntry.steps) - 1)
        let hi = min(max(floorInt(high * CellEntry.steps), 0), Int(CellEntry.steps) - 1)
        return (UInt8(lo), UInt8(hi))
    }
}

/// ⌊x⌋ as an integer, by truncation and one correction: `rounded(.down)` is a call into libm on CPUs
/// without SSE4.1's rounding instruction, and the index floors several values per query.
@inline(__always)
func floorInt(_ x: Double) -> Int {
    let t = Int(x)
    return Double(t) > x ? t - 1 : t
}

extension Octagon {
    /// The octagon in fractions of a cell of a level (`column` unwrapped, in the octagon's frame), as
    /// `CellEntry` takes it.
    func inCell(inverse: Double, column: Int, row: Int) -> Octagon {
        let c = Double(column)
        let r = Double(row)
        let sumLow = (sum.lowerBound + 270) * inverse - (c + r)
        let sumHigh = (sum.upperBound + 270) * inverse - (c + r)
        let differenceLow = (difference.lowerBound + 90) * inverse - (c - r)
        let differenceHigh = (difference.upperBound + 90) * inverse - (c - r)
        return Octagon(
            box: BoundingBox(
                minLongitude: (box.minLongitude + 180) * inverse - c, minLatitude: (box.minLatitude + 90) * inverse - r,
                maxLongitude: (box.maxLongitude + 180) * inverse - c, maxLatitude: (box.maxLatitude + 90) * inverse - r),
            sum: sumLow...sumHigh, difference: differenceLow...differenceHigh)
    }
}

extension BoundingBox {
    /// Whether two boxes overlap, trying the second one shifted by a whole turn either way.
    func intersects(_ o: BoundingBox) -> Bool {
        guard minLatitude <= o.maxLatitude, o.minLatitude <= maxLatitude else { return false }
        for shift in [0.0, 360, -360]
        where minLongitude <= o.maxLongitude + shift && o.minLongitude + shift <= maxLongitude {
            return true
        }
        return false
    }
}
