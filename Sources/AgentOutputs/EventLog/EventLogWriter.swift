import Dispatch
import Foundation
import Logging
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// Appends queued lines to the event log on a serial queue of its own (file writes never run on Swift's
/// cooperative pool), moving the file to `PATH.1` when it would pass `maximumBytes`. At the graceful
/// shutdown it writes what is queued, then ends.
final class EventLogWriter: Service, Sendable {
    let path: String
    let maximumBytes: Int
    private let logger: Logger
    private let lines: AsyncStream<String>
    private let queue: AsyncStream<String>.Continuation
    private let files = DispatchQueue(label: "event-log")

    init(path: String, maximumBytes: Int, logger: Logger) {
        self.path = path
        self.maximumBytes = maximumBytes
        self.logger = logger
        (lines, queue) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
    }

    /// Queues a line; never blocks.
    func append(_ line: String) { queue.yield(line) }

    func run() async {
        await withGracefulShutdownHandler {
            var failing = false
            for await line in lines {
                let error = await write(line + "\n")
                if let error, !failing {
                    logger.warning("event log not written", metadata: ["path": "\(path)", "error": "\(error)"])
                }
                failing = error != nil
            }
        } onGracefulShutdown: { [queue] in
            queue.finish()
        }
    }

    /// Appends `text`, rotating first when the file would pass its size; returns what went wrong.
    private func write(_ text: String) async -> String? {
        await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
            files.async { [path, maximumBytes] in
                let bytes = Array(text.utf8)
                var info = stat()
                if stat(path, &info) == 0, Int(info.st_size) + bytes.count > maximumBytes {
                    _ = rename(path, path + ".1")
                }
                let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard fd >= 0 else { return done.resume(returning: String(cString: strerror(errno))) }
                defer { close(fd) }
                let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                done.resume(returning: written == bytes.count ? nil : String(cString: strerror(errno)))
            }
        }
    }
}
