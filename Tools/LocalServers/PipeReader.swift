import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a child's pipe on a thread of its own while it runs, and takes what is left once it has exited.
/// Reading to end of file instead can wait for minutes: a process another test spawned meanwhile may
/// have inherited the pipe's write end, and end of file comes only when it exits.
public final class PipeReader: Sendable {
    private final class State: Sendable {
        let value = Mutex<(data: [UInt8], finishing: Bool)>(([], false))
        func withLock<R>(_ body: (inout (data: [UInt8], finishing: Bool)) -> R) -> R { value.withLock { body(&$0) } }
    }
    private let state = State()
    private let done = DispatchSemaphore(value: 0)

    public init(_ fd: Int32) {
        let state = self.state
        let done = self.done
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                // Read before polling: once the child has exited, everything it wrote is already in the
                // pipe, so a poll that then finds nothing means nothing more is coming from it.
                let finishing = state.withLock { $0.finishing }
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, finishing ? 0 : 50) > 0 {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n > 0 {
                        state.withLock { $0.data += buffer[0..<n] }
                        continue
                    }
                    if n == 0 { break }  // end of file: every writer closed
                }
                if finishing { break }
            }
            done.signal()
        }
        thread.start()
    }

    /// Everything the child wrote, once it has exited.
    public func finish() -> [UInt8] {
        state.withLock { $0.finishing = true }
        done.wait()
        return state.withLock { $0.data }
    }
}
