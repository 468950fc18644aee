import Dispatch
import Synchronization

/// The continuous clock, whose sleeps are timed by a serial dispatch queue.
///
/// `Task.sleep` on the standard clocks hands its timer to libdispatch's global queues, the worker pool
/// that libdispatch then watches once a second for the life of the process (see `PoolExecutor`). A
/// serial queue's thread belongs to the overcommitting pool, which is not watched. A sleeper resumes on
/// the executor it prefers.
public struct SerialTimerClock: Clock, Sendable {
    public typealias Instant = ContinuousClock.Instant
    public typealias Duration = Swift.Duration

    private static let timers = DispatchQueue(label: "geofence.serial-timer-clock")

    public init() {}

    public var now: Instant { ContinuousClock.now }
    public var minimumResolution: Duration { ContinuousClock().minimumResolution }

    /// Suspends until `deadline`, or throws `CancellationError` as soon as the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let sleeper = Sleeper()
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                guard sleeper.start(continuation) else { return }
                let wait = now.duration(to: deadline)
                guard wait < Self.longestWait else { return }
                Self.timers.asyncAfter(deadline: .now() + Self.nanoseconds(wait)) { sleeper.end(throwing: nil) }
            }
        } onCancel: {
            sleeper.end(throwing: CancellationError())
        }
    }

    /// Beyond this a sleep is "forever": no timer is set, and only cancellation ends it.
    private static let longestWait: Duration = .seconds(100 * 365 * 86_400)

    private static func nanoseconds(_ wait: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = wait.components
        return .nanoseconds(Int(max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000))
    }
}

extension Clock where Self == SerialTimerClock {
    /// The continuous clock whose timers libdispatch does not watch: `Task.sleep(for: d, clock: .serialTimer, clock: .serialTimer)`.
    public static var serialTimer: SerialTimerClock { SerialTimerClock() }
}

/// One sleep: resumed once, by its timer or by its cancellation, whichever comes first.
private final class Sleeper: Sendable {
    private enum State {
        case waiting
        case sleeping(UnsafeContinuation<Void, any Error>)
        case cancelledBeforeStart
        case ended
    }
    private let state = Mutex(State.waiting)

    /// Keeps the continuation; false (and resumes it with cancellation) when the task was cancelled first.
    func start(_ continuation: UnsafeContinuation<Void, any Error>) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            guard case .waiting = state else { return true }
            state = .sleeping(continuation)
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    func end(throwing error: (any Error)?) {
        let continuation = state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            switch state {
            case .waiting:
                state = .cancelledBeforeStart
                return nil
            case .sleeping(let continuation):
                state = .ended
                return continuation
            case .cancelledBeforeStart, .ended:
                return nil
            }
        }
        guard let continuation else { return }
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }
}
