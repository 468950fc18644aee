import Synchronization

/// What an output keeps from one happening to the next (its pace), shared by the output's copies. Outputs
/// are told on the fix processor only, so the lock is never contended.
final class OutputState<Value: Sendable>: Sendable {
    let state: Mutex<Value>
    init(_ value: Value) { state = Mutex(value) }
}
