/// An open-addressing hash table from a grid cell's key to the slots stored in that cell.
///
/// Swift's `Dictionary` hashes with SipHash, which costs more than the rest of a sparse query; a
/// multiplicative hash over dense integer keys is enough here because keys come from our own grid.
struct CellTable: Sendable {
    private static let empty = UInt64.max
    private var keys: [UInt64]
    private var buckets: [Int32]
    private var lists: [ContiguousArray<UInt32>] = []
    private var shift: UInt64
    private(set) var count = 0

    init() {
        keys = Array(repeating: Self.empty, count: 16)
        buckets = Array(repeating: -1, count: 16)
        shift = 64 - 4
    }

    @inline(__always)
    private func home(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The slots in a cell, if any.
    @inline(__always)
    func withSlots<R>(in key: UInt64, _ body: (borrowing ContiguousArray<UInt32>) -> R) -> R? {
        let mask = keys.count - 1
        var i = home(key)
        while true {
            let k = keys[i]
            if k == key { return body(lists[Int(buckets[i])]) }
            if k == Self.empty { return nil }
            i = (i + 1) & mask
        }
    }

    mutating func insert(_ slot: UInt32, in key: UInt64) {
        if (count + 1) * 4 > keys.count * 3 { grow() }
        let mask = keys.count - 1
        var i = home(key)
        while true {
            if keys[i] == key { lists[Int(buckets[i])].append(slot); return }
            if keys[i] == Self.empty {
                keys[i] = key
                buckets[i] = Int32(lists.count)
                lists.append([slot])
                count += 1
                return
            }
            i = (i + 1) & mask
        }
    }

    /// Removes a slot from a cell. An emptied cell keeps its key (a tombstone would cost probes);
    /// its list is simply empty until the table is next rebuilt by growth.
    mutating func remove(_ slot: UInt32, from key: UInt64) {
        let mask = keys.count - 1
        var i = home(key)
        while keys[i] != Self.empty {
            if keys[i] == key {
                let list = Int(buckets[i])
                if let at = lists[list].firstIndex(of: slot) { lists[list].remove(at: at) }
                return
            }
            i = (i + 1) & mask
        }
    }

    private mutating func grow() {
        let oldKeys = keys, oldBuckets = buckets, oldLists = lists
        let capacity = keys.count * 2
        keys = Array(repeating: Self.empty, count: capacity)
        buckets = Array(repeating: -1, count: capacity)
        lists = []
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        count = 0
        let mask = capacity - 1
        for (i, key) in oldKeys.enumerated() where key != Self.empty && !oldLists[Int(oldBuckets[i])].isEmpty {
            var j = home(key)
            while keys[j] != Self.empty { j = (j + 1) & mask }
            keys[j] = key
            buckets[j] = Int32(lists.count)
            lists.append(oldLists[Int(oldBuckets[i])])
            count += 1
        }
    }
}
