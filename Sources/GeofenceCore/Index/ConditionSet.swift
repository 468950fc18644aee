/// Regions with a spatial index, for pure containment with no states and no margin: what `evaluate`
/// answers and what the benchmark measures.
public struct ConditionSet: Sendable {
    public private(set) var regions: [Region] = []
    private var index = SpatialIndex()

    public init() {}

    public init(_ regions: [Region]) {
        self.regions = regions
        index.insertAll(regions: regions.enumerated().map { ($0.offset, $0.element) })
    }

    /// Adds a region and returns its position.
    @discardableResult
    public mutating func append(_ region: Region) -> Int {
        regions.append(region)
        index.insert(slot: regions.count - 1, region: region)
        return regions.count - 1
    }

    public var count: Int { regions.count }

    /// Calls `body` with the position of every region that holds the point.
    @inline(__always)
    public func forEachContaining(_ point: PreparedPoint, _ body: (Int) -> Void) {
        index.forEachCandidate(longitude: point.longitude, latitude: point.latitude) { slot, surelyInside in
            if surelyInside || regions[slot].contains(point) { body(slot) }
        }
    }

    /// The positions of every region that holds the point, ascending.
    public func containing(_ point: PreparedPoint) -> [Int] {
        var out: [Int] = []
        forEachContaining(point) { out.append($0) }
        return out.sorted()
    }

    /// The same answer by testing every region: the baseline the index is measured against.
    public func containingByLinearScan(_ point: PreparedPoint) -> [Int] {
        regions.indices.filter {
            regions[$0].boundingBox.contains(longitude: point.longitude, latitude: point.latitude)
                && regions[$0].contains(point)
        }
    }
}
