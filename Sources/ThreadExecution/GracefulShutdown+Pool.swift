import ServiceLifecycle

/// Runs `operation` until it returns, or until a graceful shutdown or the caller's cancellation cancels it:
/// ServiceLifecycle's `cancelWhenGracefulShutdown`, kept on the agent's pool.
///
/// Why not theirs: when its operation returns first, its shutdown waiter is cancelled with a `Task {}`
/// that prefers no executor, which starts libdispatch's watched pool for good (see `PoolExecutor`).
public func runUntilGracefulShutdown<T: Sendable>(
    _ operation: sending @escaping @isolated(any) () async -> T
) async -> T {
    let task = Task(executorPreference: PoolExecutor.preferred, operation: operation)
    return await withTaskCancellationHandler {
        await withGracefulShutdownHandler {
            await task.value
        } onGracefulShutdown: {
            task.cancel()
        }
    } onCancel: {
        task.cancel()
    }
}
