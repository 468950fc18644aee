import ServiceLifecycle

/// Runs `operation` until it returns, or until a graceful shutdown or the caller's cancellation cancels it:
/// ServiceLifecycle's `cancelWhenGracefulShutdown`, kept on the agent's executors.
///
/// Why not theirs: when its operation returns first, its shutdown waiter is cancelled with a `Task {}`
/// that prefers no executor, which starts libdispatch's watched pool for good (see `PoolExecutor`).
///
/// The operation runs in a task of its own, which does not inherit the caller's executor preference: a
/// caller that prefers another executor than the pool (the store's thread) passes it, or every step of
/// the operation would hop to the pool and back.
public func runUntilGracefulShutdown<T: Sendable>(
    preferring executor: (any TaskExecutor)? = PoolExecutor.preferred,
    _ operation: sending @escaping @isolated(any) () async -> T
) async -> T {
    let task = Task(executorPreference: executor, operation: operation)
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
