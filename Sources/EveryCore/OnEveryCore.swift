import Dispatch
import Foundation

/// Work spread over one thread per core, for pure work that only reads what it is given: what
/// `DispatchQueue.concurrentPerform` and the global queues do, on serial queues of its own.
///
/// Why not those: their threads are libdispatch's worker pool, and from the first time it runs work,
/// libdispatch watches that pool with a timer once a second for as long as the process lives (its workqueue
/// monitor). That is a wake-up a second a parked vehicle would pay for one restore. A serial queue's threads
/// are not watched.
package enum OnEveryCore {
    static let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
    /// One serial queue a core, for `async`.
    static let lanes: [DispatchQueue] = (0..<cores).map { DispatchQueue(label: "geofence.every-core.\($0)") }

    /// `body(0..<iterations)`, the calling thread taking one share (iterations `0`, `cores`, `2 × cores`…) and
    /// waiting for the others, each on a serial queue made for this call: a `body` that calls `perform`
    /// again never waits for a queue that waits for it.
    package static func perform(iterations: Int, _ body: (Int) -> Void) {
        let laneCount = min(cores, iterations)
        guard laneCount > 1 else {
            for i in 0..<iterations { body(i) }
            return
        }
        withoutActuallyEscaping(body) { body in
            // The lanes only read `body`, and the caller waits for all of them before it returns.
            nonisolated(unsafe) let shared = body
            let group = DispatchGroup()
            for lane in 1..<laneCount {
                DispatchQueue(label: "geofence.every-core.perform").async(group: group) {
                    for i in stride(from: lane, to: iterations, by: laneCount) { shared(i) }
                }
            }
            for i in stride(from: 0, to: iterations, by: laneCount) { shared(i) }
            group.wait()
        }
    }

    /// `work` on lane `lane` modulo the cores, counted in `group`: what `DispatchQueue.global().async(group:)`
    /// does. `work` must not wait for another lane's work.
    package static func async(group: DispatchGroup, lane: Int, _ work: @escaping @Sendable () -> Void) {
        lanes[lane % lanes.count].async(group: group, execute: work)
    }
}
