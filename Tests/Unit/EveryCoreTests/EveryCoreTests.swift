import EveryCore
import Synchronization
import TestSupport
import Testing

/// Work spread over a thread a core on serial queues of its own (`OnEveryCore`), which the restore's index
/// and the gazetteer's outlines use.
@Suite(.offTheCooperativePool(.computing)) struct EveryCoreTests {
    @Test func workOnEveryCoreComesBackInOrder() {
        let squares = workedOutOnEveryCore(10_000, chunk: 64) { $0 * $0 }
        #expect(squares == (0..<10_000).map { $0 * $0 })
        #expect(workedOutOnEveryCore(3) { $0 + 1 } == [1, 2, 3])
    }

    /// Work on every core that itself works on every core (the gazetteer's two halves, each an index) ends,
    /// and each iteration runs once.
    @Test func workOnEveryCoreWithinWorkOnEveryCoreEnds() {
        let sums = workedOutOnEveryCore(4, chunk: 1) { outer in
            workedOutOnEveryCore(2_000, chunk: 64) { outer * 10_000 + $0 }.reduce(0, +)
        }
        #expect(sums == (0..<4).map { outer in (0..<2_000).map { outer * 10_000 + $0 }.reduce(0, +) })
        let seen = Mutex([Int](repeating: 0, count: 100))
        OnEveryCore.perform(iterations: 100) { i in seen.withLock { $0[i] += 1 } }
        #expect(seen.withLock { $0 } == [Int](repeating: 1, count: 100))
    }
}
