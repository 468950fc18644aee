extension MonitorEngine {
    /// Persisted records made ready for a restore on the thread that decoded them. Each slot is built there,
    /// and its identifier and region are held a second time (for the lookup table and the index) while their
    /// objects are still in that core's cache; `Restoration.add(_:)` then only moves them.
    public struct RestoredRecords: Sendable {
        // Three columns rather than one array of triples, so that `Restoration.add(_:)` can move each part
        // out on its own (`take()`) instead of copying.
        fileprivate var slots: [Slot?] = []
        fileprivate var keys: [String?] = []
        fileprivate var regions: [Region?] = []
        fileprivate var boxes: [BoundingBox] = []

        /// An empty part, with room for `capacity` records.
        public init(capacity: Int = 0) {
            slots.reserveCapacity(capacity)
            keys.reserveCapacity(capacity)
            regions.reserveCapacity(capacity)
            boxes.reserveCapacity(capacity)
        }

        /// How many records the part holds.
        public var count: Int { slots.count }

        /// Adds a persisted record, as `MonitorEngine.restore(_:identifier:)` would take it.
        public mutating func append(identifier: String, record: MonitorRecord) {
            regions.append(record.condition.region)
            boxes.append(record.condition.region.boundingBox)
            keys.append(identifier)
            slots.append(Slot(identifier: identifier, record: record))
        }
    }

    /// A restore under way: records are added part by part, as the store reads them, while other cores
    /// decode the next parts; the index is built once, by `finish`. Identifiers already present, in the
    /// engine or in an earlier part, are replaced.
    public struct Restoration: Sendable {
        private var engine: MonitorEngine
        private var regions: [(slot: Int, region: Region?, box: BoundingBox)] = []
        /// Whether a restored slot was replaced before the index was built: its region is then left out.
        private var replacedAny = false

        /// Starts restoring into `engine` (usually new), with room for `count` more conditions.
        public init(_ engine: consuming MonitorEngine, expecting count: Int = 0) {
            self.engine = engine
            self.engine.reserveCapacity(forMore: count)
            regions.reserveCapacity(count)
        }

        /// Takes the engine out of `engine`, leaving an empty one of the same name there, so that the restore
        /// does not copy its tables on write.
        init(taking engine: inout MonitorEngine, expecting count: Int) {
            var taken = MonitorEngine(name: engine.name, configuration: engine.configuration)
            swap(&taken, &engine)
            self.init(consume taken, expecting: count)
        }

        /// Puts a part's records in place. Pass it with `consume`: a part still referenced elsewhere would
        /// be copied, each of its references retained.
        public mutating func add(_ records: consuming RestoredRecords) {
            for i in records.slots.indices {
                guard let key = records.keys[i].take(), let region = records.regions[i].take() else { continue }
                let placed = engine.putRestored(&records.slots[i], key: key)
                if placed.replaced != nil { replacedAny = true }
                regions.append((placed.slot, region, records.boxes[i]))
            }
        }

        /// Indexes every restored region in one build and returns the engine.
        public consuming func finish(indexFloor: Int? = nil, refineIndexLater: Bool = false) -> MonitorEngine {
            if replacedAny {
                // A replaced slot is free, or holds a later record: keep each occupied slot's last region.
                var seen = Set<Int>()
                let kept = regions.reversed().filter { engine.slots[$0.slot] != nil && seen.insert($0.slot).inserted }
                regions = kept.reversed()
            }
            var items: [(slot: Int, region: Region?, box: BoundingBox)] = []
            swap(&items, &regions)
            engine.index.insertAll(restored: &items, floor: indexFloor, refineLater: refineIndexLater)
            return engine
        }
    }
}
