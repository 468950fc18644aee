import Foundation

/// What one region does inside one grid cell, cut into 8×8 sub-cells: the sub-cells it surely covers
/// whole, and those its boundary may cross. A sub-cell in neither set is surely outside.
///
/// A query that lands in a covered sub-cell is answered with no exact test, and one in an outside
/// sub-cell is dropped: only sub-cells the boundary may cross still need the exact test. Each set is
/// conservative, so an answer through the mask is always the exact test's answer.
struct CellMask: Sendable, Equatable {
    /// Sub-cells per side.
    static let side = 8
    var inside: UInt64
    var boundary: UInt64

    /// Nothing known: every sub-cell needs the exact test.
    static let unknown = CellMask(inside: 0, boundary: ~0)

    /// The bit of sub-cell (column i, row j), counted from the cell's south-west corner.
    @inline(__always)
    static func bit(_ i: Int, _ j: Int) -> UInt64 { 1 << UInt64(j * side + i) }

    /// The bit of the sub-cell holding a point at fractions `u`, `v` (each in [0, 1]) of the cell.
    /// A point on a sub-cell's edge may land on either side of it; classification pads each
    /// sub-cell so that both answers hold.
    @inline(__always)
    static func bit(fractionU u: Double, fractionV v: Double) -> UInt64 {
        bit(min(Int(u * Double(side)), side - 1), min(Int(v * Double(side)), side - 1))
    }
}

extension CellMask {
    /// The bits of a rectangle of sub-cells.
    @inline(__always)
    static func rectangle(columns: ClosedRange<Int>, rows: ClosedRange<Int>) -> UInt64 {
        let width = columns.upperBound - columns.lowerBound + 1
        let row: UInt64 = (width >= side ? 0xFF : (1 << UInt64(width)) - 1) << UInt64(columns.lowerBound)
        var bits: UInt64 = 0
        for j in rows { bits |= row << UInt64(j * side) }
        return bits
    }

    /// The largest rectangle of sub-cells (columns `i0...i1`, rows `j0...j1`) that are all inside,
    /// or nil when none is.
    func largestInsideRectangle() -> (i0: Int, j0: Int, i1: Int, j1: Int)? {
        guard inside != 0 else { return nil }
        var best: (i0: Int, j0: Int, i1: Int, j1: Int)?
        var bestArea = 0
        for j0 in 0..<Self.side {
            var columns: UInt64 = 0xFF
            for j1 in j0..<Self.side {
                columns &= (inside >> UInt64(j1 * Self.side)) & 0xFF
                if columns == 0 { break }
                // Each run of columns inside on every row from j0 to j1, as it grows.
                var start = -1
                for i in 0..<Self.side {
                    guard columns >> UInt64(i) & 1 != 0 else {
                        start = -1
                        continue
                    }
                    if start < 0 { start = i }
                    let area = (i - start + 1) * (j1 - j0 + 1)
                    if area > bestArea {
                        bestArea = area
                        best = (start, j0, i, j1)
                    }
                }
            }
        }
        return best
    }
}

/// A cell of the grid in plain longitude (its west edge in [-180, 180)) and latitude.
struct GridCell: Sendable {
    var west: Double
    var south: Double
    var size: Double

    var subcellSize: Double { size / Double(CellMask.side) }

    /// Sub-cell (i, j) as a box, grown by `pad` degrees on every side.
    func subcell(_ i: Int, _ j: Int, pad: Double = 0) -> BoundingBox {
        let s = subcellSize
        return BoundingBox(
            minLongitude: west + Double(i) * s - pad, minLatitude: south + Double(j) * s - pad,
            maxLongitude: west + Double(i + 1) * s + pad, maxLatitude: south + Double(j + 1) * s + pad)
    }
}

extension Region {
    /// Pads sub-cells so that rounding in a query's sub-cell (about 1e-13°) never matters.
    static let subcellPad = 1e-9

    /// This region's mask in a cell.
    func mask(in cell: GridCell) -> CellMask {
        switch self {
        case .circle(let c): c.mask(in: cell)
        case .polygon(let p): p.mask(in: cell)
        // A corridor's distance to its line has no cheap bound here: its box check and exact test decide.
        case .corridor: .unknown
        }
    }
}

extension CircleRegion {
    /// Each sub-cell is decided by the triangle inequality around its centre: every point of it lies
    /// within `reach` of the centre, and the chord bounds the centre's geodesic distance from both sides.
    func mask(in cell: GridCell) -> CellMask {
        var mask = CellMask(inside: 0, boundary: 0)
        let s = cell.subcellSize
        // The meridian and the parallels are longest per degree at the poles: 111,694 m.
        let metresPerDegree = 111_700.0
        // Sub-cell centres share their row's parallel and their column's meridian.
        var meridians: [ECEF.Meridian] = []
        meridians.reserveCapacity(CellMask.side)
        for i in 0..<CellMask.side { meridians.append(ECEF.Meridian(longitude: cell.west + (Double(i) + 0.5) * s)) }
        for j in 0..<CellMask.side {
            let south = cell.south + Double(j) * s
            let north = south + s
            var parallel: ECEF.Parallel?
            let nearestEquator = south <= 0 && north >= 0 ? 0 : min(abs(south), abs(north))
            // From the centre along its meridian, then along the point's parallel: a path, so no shorter
            // than the geodesic. Padded for the sub-cell pad and rounding.
            let reach =
                (s / 2 + Region.subcellPad) * metresPerDegree * (1 + cos(nearestEquator * .pi / 180)) * (1 + 1e-9)
                + 0.01
            for i in 0..<CellMask.side {
                let box = cell.subcell(i, j, pad: Region.subcellPad)
                guard boundingBox.intersects(box) else { continue }
                if parallel == nil { parallel = ECEF.Parallel(latitude: (south + north) / 2) }
                let centre = ECEF(parallel: parallel.unsafelyUnwrapped, meridian: meridians[i])
                let chord = centre.chord(to: centerECEF)
                if chord - reach > radius { continue }
                if chord < ChordBounds.maximumChord && ChordBounds.upper(chord: chord) + reach <= radius {
                    mask.inside |= CellMask.bit(i, j)
                } else {
                    mask.boundary |= CellMask.bit(i, j)
                }
            }
        }
        return mask
    }
}

extension PolygonRegion {
    /// Sub-cells that any edge touches are boundary. Between them, along a row, a run of untouched
    /// sub-cells lies wholly on one side, so one point-in-polygon test decides the whole run.
    func mask(in cell: GridCell) -> CellMask {
        let s = cell.subcellSize
        let pad = Region.subcellPad
        var boundary: UInt64 = 0
        var touched: UInt64 = 0  // sub-cells that meet some part's box
        for part in parts {
            // The cell in this part's longitude frame.
            let shift =
                360 * ((part.box.minLongitude + part.box.maxLongitude - 2 * cell.west - cell.size) / 720).rounded()
            let west = cell.west + shift
            for i in 0..<CellMask.side {
                for j in 0..<CellMask.side {
                    let box = BoundingBox(
                        minLongitude: west + Double(i) * s - pad, minLatitude: cell.south + Double(j) * s - pad,
                        maxLongitude: west + Double(i + 1) * s + pad, maxLatitude: cell.south + Double(j + 1) * s + pad)
                    if box.minLatitude <= part.box.maxLatitude && part.box.minLatitude <= box.maxLatitude
                        && box.minLongitude <= part.box.maxLongitude && part.box.minLongitude <= box.maxLongitude
                    {
                        touched |= CellMask.bit(i, j)
                    }
                }
            }
            for r in part.firstRing..<part.endRing {
                let ring = rings[r]
                for k in (ring.start + 1)..<ring.end {
                    boundary |= edgeMask(vertices[k - 1], vertices[k], west: west, south: cell.south, subcell: s)
                }
            }
        }
        var inside: UInt64 = 0
        for j in 0..<CellMask.side {
            var i = 0
            while i < CellMask.side {
                if boundary & CellMask.bit(i, j) != 0 {
                    i += 1
                    continue
                }
                var end = i
                var meetsBox = false
                while end < CellMask.side && boundary & CellMask.bit(end, j) == 0 {
                    meetsBox = meetsBox || touched & CellMask.bit(end, j) != 0
                    end += 1
                }
                let lon = wrapLongitude(cell.west + (Double(i) + 0.5) * s)
                if meetsBox && contains(longitude: lon, latitude: cell.south + (Double(j) + 0.5) * s) {
                    for k in i..<end { inside |= CellMask.bit(k, j) }
                }
                i = end
            }
        }
        return CellMask(inside: inside, boundary: boundary & touched)
    }

    /// The sub-cells (padded) that the segment from `a` to `b` meets, in a cell whose south-west corner
    /// is (`west`, `south`) in the segment's frame.
    private func edgeMask(_ a: SIMD2<Double>, _ b: SIMD2<Double>, west: Double, south: Double, subcell s: Double)
        -> UInt64
    {
        let pad = Region.subcellPad
        let n = Double(CellMask.side)
        let i0 = Int(((min(a.x, b.x) - pad - west) / s).rounded(.down))
        let i1 = Int(((max(a.x, b.x) + pad - west) / s).rounded(.down))
        let j0 = Int(((min(a.y, b.y) - pad - south) / s).rounded(.down))
        let j1 = Int(((max(a.y, b.y) + pad - south) / s).rounded(.down))
        guard i1 >= 0, j1 >= 0, Double(i0) < n, Double(j0) < n else { return 0 }
        var mask: UInt64 = 0
        for i in max(i0, 0)...min(i1, CellMask.side - 1) {
            for j in max(j0, 0)...min(j1, CellMask.side - 1) {
                let x0 = west + Double(i) * s - pad
                let x1 = west + Double(i + 1) * s + pad
                let y0 = south + Double(j) * s - pad
                let y1 = south + Double(j + 1) * s + pad
                if segmentMeetsBox(a, b, x0: x0, y0: y0, x1: x1, y1: y1) { mask |= CellMask.bit(i, j) }
            }
        }
        return mask
    }
}

/// Whether a segment meets a closed box whose extent already overlaps the segment's: unless all four
/// corners lie strictly on one side of the segment's line. The pad on the box absorbs the rounding.
@inline(__always)
func segmentMeetsBox(_ a: SIMD2<Double>, _ b: SIMD2<Double>, x0: Double, y0: Double, x1: Double, y1: Double) -> Bool {
    let dx = b.x - a.x
    let dy = b.y - a.y
    func side(_ x: Double, _ y: Double) -> Double { dx * (y - a.y) - dy * (x - a.x) }
    let s0 = side(x0, y0)
    let s1 = side(x1, y0)
    let s2 = side(x0, y1)
    let s3 = side(x1, y1)
    if s0 > 0 && s1 > 0 && s2 > 0 && s3 > 0 { return false }
    if s0 < 0 && s1 < 0 && s2 < 0 && s3 < 0 { return false }
    return true
}
