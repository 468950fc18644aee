import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A mosquitto broker of our own on a free loopback port, with a generated configuration in its own
/// directory, for tests, benchmarks and the demo. Started and stopped by PID: it never touches a broker it
/// did not start.
public final class LocalMosquitto: @unchecked Sendable {
    public let port: Int
    public let directory: URL
    private let settings: String
    private var pid: pid_t?

    /// `settings` are extra lines for the listener (TLS) and the broker (ACLs, passwords).
    public init(settings: String = "allow_anonymous true", port: Int? = nil) throws {
        self.port = try port ?? Self.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mosquitto-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.settings = settings
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    public func start() throws {
        let config = """
            # Generated for one test. `user root`: running as root the broker would otherwise switch to the
            # mosquitto user and be unable to write its persistence file here.
            user root
            per_listener_settings false
            persistence true
            persistence_location \(directory.path)/
            autosave_interval 1
            max_queued_messages 100000
            set_tcp_nodelay true
            log_dest file \(path("broker.log"))
            log_type all
            listener \(port) 127.0.0.1
            \(settings)
            """
        try config.write(toFile: path("mosquitto.conf"), atomically: true, encoding: .utf8)
        pid = try Self.spawn("/usr/sbin/mosquitto", ["-c", path("mosquitto.conf")])
        try waitUntilListening()
    }

    /// posix_spawn with an empty signal mask and default signal actions: the test runner blocks SIGTERM
    /// in its threads, and a child inheriting that would ignore a graceful stop.
    public static func spawn(_ tool: String, _ arguments: [String], standardInput: String = "/dev/null") throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([tool] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid = pid_t()
        let rc = posix_spawn(&pid, tool, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw BrokerError("posix_spawn \(tool): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// SIGTERM, then wait: the broker saves its persistent state on the way out. SIGKILL after 10 s.
    public func stop() {
        guard let pid else { return }
        self.pid = nil
        kill(pid, SIGTERM)
        if !Self.reap(pid, within: 10) {
            kill(pid, SIGKILL)
            _ = Self.reap(pid, within: 10)
        }
    }

    /// Polls for the child's exit, so that no thread blocks in waitpid.
    public static func reap(_ pid: pid_t, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        repeat {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || r < 0 { return true }
            usleep(5_000)
        } while Date() < deadline
        return false
    }

    /// Reloads the password and ACL files.
    public func reload() {
        if let pid { kill(pid, SIGHUP) }
    }

    private func waitUntilListening() throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.canConnect(port: port) { return }
            if let pid, Self.reap(pid, within: 0) {
                self.pid = nil
                let log = (try? String(contentsOfFile: path("broker.log"), encoding: .utf8)) ?? ""
                throw BrokerError("mosquitto exited at start: \(log.suffix(800))")
            }
            usleep(20_000)
        }
        throw BrokerError("mosquitto did not listen on 127.0.0.1:\(port) within 10 s")
    }

    public static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A port nothing listens on now: bind port 0 on loopback and read what the kernel chose.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BrokerError("bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a helper program (openssl, mosquitto_passwd) and fails loudly if it fails.
    public static func run(_ tool: String, _ arguments: [String], in directory: URL) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        p.currentDirectoryURL = directory
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        try p.run()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw BrokerError("\(tool) \(arguments.joined(separator: " ")) failed: \(String(decoding: errors, as: UTF8.self))")
        }
    }
}

public struct BrokerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

