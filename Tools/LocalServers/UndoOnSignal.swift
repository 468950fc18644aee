import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What this process started and must undo if SIGINT, SIGTERM or SIGHUP ends it before its own code does:
/// the children `LocalProcess.spawn` started and has not reaped, and whatever else was registered (a
/// `CellularLink`'s namespaces, a run's directories). Registering costs nothing until a program calls
/// `install()`; the test runner never does, benchmarks do.
public enum UndoOnSignal {
    private struct Registry {
        var stopping = false
        var children: Set<pid_t> = []
        var next = 0
        var actions: [(token: Int, action: @Sendable () -> Void)] = []
    }

    private static let registry = Mutex(Registry())
    private static let sources = Mutex<[any DispatchSourceSignal]>([])

    /// Seconds a child gets after SIGTERM before SIGKILL (the agent's own stop on a stalled link takes 3).
    static let grace = 10.0

    /// From now on SIGINT, SIGTERM and SIGHUP stop every child, run the registered actions (the last
    /// registered first), then end the process by that signal, as its default action would have.
    public static func install() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            let queue = DispatchQueue(label: "undo-on-signal")
            // The bench's own thread may fail on what the undo stopped and exit first: it waits for the undo.
            atexit { UndoOnSignal.waitWhileUndoing() }
            for number in [SIGINT, SIGTERM, SIGHUP] {
                // Ignored, so that only the source sees it; a child gets the default back from posix_spawn.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { undoAndEnd(by: number) }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Registers `action`; nil if a signal is already being handled, and then the caller must undo what it
    /// made itself (nothing registered after that moment would run).
    public static func register(_ action: @escaping @Sendable () -> Void) -> Int? {
        registry.withLock { r -> Int? in
            guard !r.stopping else { return nil }
            r.next += 1
            r.actions.append((r.next, action))
            return r.next
        }
    }

    /// A directory (or file) made for this run only: removed by `now()`, or by the undo if a signal comes
    /// first.
    public struct Removal: Sendable {
        public let path: String
        let token: Int?

        /// Removes the path and forgets the undo.
        public func now() {
            try? FileManager.default.removeItem(atPath: path)
            UndoOnSignal.forget(token)
        }
    }

    /// Registers the removal of `path`, for a signal or for `Removal.now()`, whichever comes first.
    public static func removal(of path: String) -> Removal {
        Removal(path: path, token: register { removeTree(path) })
    }

    /// Forgets an action its owner has run (or no longer needs).
    public static func forget(_ token: Int?) {
        guard let token else { return }
        registry.withLock { $0.actions.removeAll { $0.token == token } }
    }

    /// Records a child just spawned; false if a signal is already being handled.
    static func started(child: pid_t) -> Bool {
        registry.withLock { r in
            guard !r.stopping else { return false }
            r.children.insert(child)
            return true
        }
    }

    /// Forgets a child that was reaped.
    static func ended(child: pid_t) {
        _ = registry.withLock { $0.children.remove(child) }
    }

    /// Blocks for good once a signal is being handled: the undo ends the process when it is done.
    private static func waitWhileUndoing() {
        guard registry.withLock({ $0.stopping }) else { return }
        while true { pause() }
    }

    /// Removes `path`, again if the bench's own thread removing it at the same time made a walk fail.
    private static func removeTree(_ path: String) {
        for _ in 0..<20 where FileManager.default.fileExists(atPath: path) {
            if (try? FileManager.default.removeItem(atPath: path)) == nil { usleep(10_000) }
        }
    }

    private static func undoAndEnd(by number: Int32) {
        let (children, actions) = registry.withLock { r in
            r.stopping = true
            defer {
                r.children = []
                r.actions = []
            }
            return (r.children, r.actions)
        }
        // Only a child still ours and unreaped: its PID cannot have been given to another process. One that
        // another wait reaped (wait4 for its CPU) answers ECHILD and is left alone.
        var status: Int32 = 0
        let running = children.filter { waitpid($0, &status, WNOHANG) == 0 }
        for child in running { kill(child, SIGTERM) }
        for child in running where LocalProcess.exitStatus(of: child, within: grace) == nil {
            kill(child, SIGKILL)
            _ = LocalProcess.exitStatus(of: child, within: 5)
        }
        for (_, action) in actions.reversed() { action() }
        // To the process, not this thread: dispatch's threads block signals, and one raised here would wait.
        signal(number, SIG_DFL)
        kill(getpid(), number)
        usleep(200_000)
        _exit(128 + number)
    }
}
