/// Sign of the orientation of `p` against the directed line `a`→`b`: +1 left, -1 right, 0 on it.
///
/// A floating-point determinant decides almost always; when it is within its rounding error the sign is
/// recomputed exactly from error-free products, so points that lie exactly on an edge are found to lie on
/// it, as GEOS's robust predicates find them.
@inline(__always)
func orientation(_ a: SIMD2<Double>, _ b: SIMD2<Double>, _ p: SIMD2<Double>) -> Int {
    let detLeft = (b.x - a.x) * (p.y - a.y)
    let detRight = (b.y - a.y) * (p.x - a.x)
    let det = detLeft - detRight
    let bound = 4e-16 * (abs(detLeft) + abs(detRight))
    if det > bound { return 1 }
    if det < -bound { return -1 }
    return exactOrientation(a, b, p)
}

/// The exact sign of (bx-ax)(py-ay) - (by-ay)(px-ax), expanded into six products of inputs so that no
/// subtraction rounds, each product split exactly with FMA, and the twelve terms summed as an expansion.
@usableFromInline
func exactOrientation(_ a: SIMD2<Double>, _ b: SIMD2<Double>, _ p: SIMD2<Double>) -> Int {
    // det = bx*py - bx*ay - ax*py - by*px + by*ax + ay*px
    var terms: [Double] = []
    terms.reserveCapacity(12)
    func addProduct(_ x: Double, _ y: Double) {
        let hi = x * y
        let lo = (x * y).addingProduct(-x, y)  // hi - x*y exactly, negated below
        terms.append(hi)
        terms.append(-lo)
    }
    addProduct(b.x, p.y)
    addProduct(-b.x, a.y)
    addProduct(-a.x, p.y)
    addProduct(-b.y, p.x)
    addProduct(b.y, a.x)
    addProduct(a.y, p.x)
    // Grow an expansion term by term with exact two-sums (Shewchuk); its largest nonzero component
    // carries the sign of the exact sum.
    var expansion: [Double] = []
    expansion.reserveCapacity(24)
    for t in terms where t != 0 {
        var q = t
        var next: [Double] = []
        next.reserveCapacity(expansion.count + 1)
        for e in expansion {
            let s = q + e
            let bv = s - q
            let err = (q - (s - bv)) + (e - bv)
            if err != 0 { next.append(err) }
            q = s
        }
        if q != 0 { next.append(q) }
        expansion = next
    }
    guard let top = expansion.last else { return 0 }
    return top > 0 ? 1 : -1
}

/// True when closed segments a-b and c-d share at least one point.
func segmentsIntersect(_ a: SIMD2<Double>, _ b: SIMD2<Double>, _ c: SIMD2<Double>, _ d: SIMD2<Double>) -> Bool {
    // Segments whose boxes are apart share nothing: most pairs end here, before any orientation.
    if max(a.x, b.x) < min(c.x, d.x) || max(c.x, d.x) < min(a.x, b.x) || max(a.y, b.y) < min(c.y, d.y)
        || max(c.y, d.y) < min(a.y, b.y)
    {
        return false
    }
    let o1 = orientation(a, b, c)
    let o2 = orientation(a, b, d)
    let o3 = orientation(c, d, a)
    let o4 = orientation(c, d, b)
    if o1 != o2 && o3 != o4 && o1 != 0 && o2 != 0 && o3 != 0 && o4 != 0 { return true }
    if o1 == 0 && onSegment(a, b, c) { return true }
    if o2 == 0 && onSegment(a, b, d) { return true }
    if o3 == 0 && onSegment(c, d, a) { return true }
    if o4 == 0 && onSegment(c, d, b) { return true }
    return o1 * o2 < 0 && o3 * o4 < 0
}

/// For a point known to be collinear with a-b: whether it lies within the segment's extent.
@inline(__always)
func onSegment(_ a: SIMD2<Double>, _ b: SIMD2<Double>, _ p: SIMD2<Double>) -> Bool {
    p.x >= min(a.x, b.x) && p.x <= max(a.x, b.x) && p.y >= min(a.y, b.y) && p.y <= max(a.y, b.y)
}
