import AsyncBroadcast
import GeofenceCore
import Synchronization
import ThreadExecution

/// Fixes handed to the fix processor by a source on the store's thread (gpsd's reading, a replay's
/// pacing): each is decided there at once, inside the source's wake-up, with no task to resume. Only what
/// must wait (a commit whose events the publisher should send first, a live update to queue) goes to the
/// processor's follower task (`FixProcessor.follow(_:)`), and every fix after it until it has caught up,
/// so that fixes keep their order. A fix handed over on any other thread goes to the follower as well.
final class FixDelivery: ElementSink, Sendable {
    enum Step: Sendable {
        /// A fix to handle whole.
        case fix(Location)
        /// The rest of a fix decided on delivery.
        case complete
    }

    let steps: UnboundedChannel<Step>
    private let processor: FixProcessor
    /// Steps handed to the follower that it has not finished: while any are, a fix joins them.
    let outstanding = Atomic<Int>(0)

    init(processor: FixProcessor, onConsumerCancelled: (@Sendable () -> Void)? = nil) {
        self.processor = processor
        steps = UnboundedChannel(onConsumerCancelled: onConsumerCancelled)
    }

    func accept(_ fix: Location) {
        // The follower is gone (the agent stops): nothing more is decided.
        guard !steps.isFinished else { return }
        guard processor.storeExecutor.isCurrentThread, outstanding.load(ordering: .relaxed) == 0 else {
            handOver(.fix(fix))
            return
        }
        if processor.decideOnStoreThread(fix) { handOver(.complete) }
    }

    private func handOver(_ step: Step) {
        outstanding.add(1, ordering: .relaxed)
        steps.yield(step)
    }

    var isFinished: Bool { steps.isFinished }

    func finish() { steps.finish() }
}
