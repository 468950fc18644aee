/// A consumer handed each element on the producer's thread, as it is produced: no queue and no task to
/// resume. The agent's fix path is one: a fix read on the store's thread is decided there at once.
public protocol ElementSink<Element>: AnyObject, Sendable {
    associatedtype Element: Sendable
    /// Takes an element, on the producer's thread.
    func accept(_ element: Element)
    /// The consumer is gone: the producer may stop.
    var isFinished: Bool { get }
    /// No more elements will come.
    func finish()
}

extension UnboundedChannel: ElementSink {
    /// Queues the element for the channel's consumer (`yield`).
    @inlinable
    public func accept(_ element: Element) { yield(element) }
}
