import ServiceLifecycle
import ThreadExecution

/// Gives the restored monitors' indexes their octagons and masks (`FixProcessor.refineRestoredIndexes`),
/// then ends. Until then fixes are answered from the regions' boxes: the same events. A stop ends it at
/// once.
struct IndexRefinementService: Service {
    let processor: FixProcessor

    func run() async {
        await runUntilGracefulShutdown { await processor.refineRestoredIndexes() }
    }
}
