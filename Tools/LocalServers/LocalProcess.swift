import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Starting, finding and stopping the helper processes that tests, benchmarks and the demo run on
/// loopback. Processes are only ever stopped by the PID this code started.
public enum LocalProcess {
    /// posix_spawn with an empty signal mask and default signal actions: the test runner blocks SIGTERM
    /// in its threads, and a child inheriting that would ignore a graceful stop.
    /// `environment` replaces the inherited one when given.
    /// The child is stopped, and reaped, should a signal end this process first (`UndoOnSignal`).
    public static func spawn(
        _ tool: String, _ arguments: [String], standardInput: String = "/dev/null",
        standardOutput: String = "/dev/null",
        standardError: String = "/dev/null", environment: [String: String]? = nil
    ) throws -> pid_t {
        let pid = try spawnHelper(
            tool, arguments, standardInput: standardInput, standardOutput: standardOutput,
            standardError: standardError, environment: environment)
        guard UndoOnSignal.started(child: pid) else {
            terminate(pid)
            throw LocalServerError("\(tool) not started: this process is stopping on a signal")
        }
        return pid
    }

    /// `spawn` for a short helper its caller waits for at once (`ip`), which undoing on a signal may need.
    static func spawnHelper(
        _ tool: String, _ arguments: [String], standardInput: String = "/dev/null",
        standardOutput: String = "/dev/null",
        standardError: String = "/dev/null", environment: [String: String]? = nil
    ) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        var all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // Nothing else of ours: Foundation's Process learns that its child exited when a socket it gave
        // that child closes, and a long-lived server spawned meanwhile by another test would otherwise keep
        // that socket open for its whole life (swift-corelibs-foundation issue 4795). Pipes and lock files
        // likewise.
        closeEverythingElse(&actions)
        let argv = ([tool] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map {
            $0.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { for e in envp ?? [] { free(e) } }
        var pid = pid_t()
        let rc =
            envp.map { e in
                e.withUnsafeBufferPointer { posix_spawn(&pid, tool, &actions, &attributes, argv, $0.baseAddress) }
            }
            ?? posix_spawn(&pid, tool, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw LocalServerError("posix_spawn \(tool): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// Has the child close every descriptor from 3 on: glibc's `posix_spawn_file_actions_addclosefrom_np`
    /// (2.34 and later; Swift's Glibc module does not show it), else each one open now.
    private static func closeEverythingElse(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        // A descriptor closed meanwhile is no error for the child (glibc ignores EBADF on a close action).
        for fd in open.compactMap({ Int32($0) }) where fd >= 3 { posix_spawn_file_actions_addclose(&actions, fd) }
    }

    /// Polls for the child's exit, so that no thread blocks in waitpid.
    public static func reap(_ pid: pid_t, within seconds: Double) -> Bool {
        exitStatus(of: pid, within: seconds) != nil
    }

    /// Polls for the child's exit and returns its status: the exit code, or 128 + the signal that ended
    /// it (as a shell says); nil if it still runs after `seconds`, or -1 if it was not ours to reap.
    public static func exitStatus(of pid: pid_t, within seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        repeat {
            let r = waitpid(pid, &status, WNOHANG)
            if r != 0 { UndoOnSignal.ended(child: pid) }
            if r < 0 { return -1 }
            if r == pid {
                let signal = status & 0x7F
                return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
            }
            usleep(5_000)
        } while Date() < deadline
        return nil
    }

    /// SIGTERM, then wait (servers save their state on the way out); SIGKILL after `grace` seconds.
    public static func terminate(_ pid: pid_t, grace: Double = 10) {
        kill(pid, SIGTERM)
        if !reap(pid, within: grace) {
            kill(pid, SIGKILL)
            _ = reap(pid, within: 10)
        }
    }

    /// Waits until something accepts connections on 127.0.0.1:`port`, or the process exits.
    public static func waitUntilListening(
        port: Int, pid: pid_t, name: String, log: String? = nil, within seconds: Double = 10
    ) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if canConnect(port: port) { return }
            if reap(pid, within: 0) {
                let text = log.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
                throw LocalServerError("\(name) exited at start: \(text.suffix(800))")
            }
            usleep(20_000)
        }
        throw LocalServerError("\(name) did not listen on 127.0.0.1:\(port) within \(Int(seconds)) s")
    }

    /// Waits until the process's log holds every one of `markers`, or it exits: a server inside a network
    /// namespace, whose port cannot be tried from here.
    public static func waitUntilLogged(
        _ markers: [String], log: String, pid: pid_t, name: String, within seconds: Double
    ) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if markers.allSatisfy(text.contains) { return }
            if reap(pid, within: 0) { throw LocalServerError("\(name) exited in its namespace: \(text.suffix(800))") }
            usleep(20_000)
        }
        throw LocalServerError("\(name) did not start listening within \(Int(seconds)) s in its namespace")
    }

    public static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return LoopbackConnection.connect(fd, port: port)
    }

    /// Ports handed out in this process. The kernel may offer a port that was free a moment ago to the
    /// next bind(0), so two servers started in parallel could otherwise be told the same port.
    private static let handedOut = Mutex<Set<Int>>([])

    /// Records a port as taken; false when it was handed out already.
    public static func claim(port: Int) -> Bool {
        handedOut.withLock { $0.insert(port).inserted }
    }

    /// A port nothing listens on now and that this process has not handed out before, below the kernel's
    /// ephemeral range: a port from that range (what bind(0) offers) can be taken, between now and the
    /// server's own bind, as the local end of any outgoing connection, and the server then fails with
    /// "Address already in use".
    public static func freePort() throws -> Int {
        let ephemeral = ephemeralPortRange()
        let below = 10_000..<max(10_000, ephemeral.lowerBound)
        let above = min(ephemeral.upperBound + 1, 65_536)..<65_536
        var ports = below.count >= above.count ? below : above
        // A machine whose ephemeral range leaves nothing: any port, each still checked by a bind.
        if ports.count < 1000 { ports = 10_000..<65_536 }
        for _ in 0..<200 {
            let port = Int.random(in: ports)
            if canBind(port: port) && claim(port: port) { return port }
        }
        throw LocalServerError("no free loopback port in \(ports.lowerBound)–\(ports.upperBound - 1) after 200 tries")
    }

    /// The ports the kernel hands out to bind(0) and to outgoing connections.
    static func ephemeralPortRange() -> ClosedRange<Int> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let bounds = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
        guard bounds.count == 2, bounds[0] <= bounds[1] else { return 32_768...60_999 }
        return bounds[0]...bounds[1]
    }

    /// Whether a TCP socket can bind 127.0.0.1:`port` now.
    private static func canBind(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return LoopbackConnection.bind(fd, port: port) != nil
    }

    /// Runs a helper program (openssl, mosquitto_passwd) and fails loudly if it fails; its standard output.
    @discardableResult
    public static func run(_ tool: String, _ arguments: [String], in directory: URL) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        p.currentDirectoryURL = directory
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let output = PipeReader(out.fileHandleForReading.fileDescriptor)
        let reader = PipeReader(err.fileHandleForReading.fileDescriptor)
        p.waitUntilExit()
        let printed = output.finish()
        let errors = reader.finish()
        guard p.terminationStatus == 0 else {
            throw LocalServerError(
                "\(tool) \(arguments.joined(separator: " ")) failed: \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: printed, as: UTF8.self) + String(decoding: errors, as: UTF8.self)
    }
}

public struct LocalServerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}
