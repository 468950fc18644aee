import Foundation
import Synchronization

/// A serial executor on one dedicated thread. An actor that uses it runs every method there, so its
/// blocking C calls (SQLite's writes and fsyncs) never occupy Swift's cooperative pool.
public final class ThreadExecutor: SerialExecutor, @unchecked Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    private let signal = DispatchSemaphore(value: 0)

    public init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        jobs.withLock { $0.append(unowned) }
        signal.signal()
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    private func run() {
        while true {
            signal.wait()
            let next = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            next?.runSynchronously(on: asUnownedSerialExecutor())
        }
    }
}
