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
    /// Extra lines for the listener and the broker; may be set until `start()`.
    public var settings: String
    /// The WebSocket listener's port, after `addWebSocketListener`.
    public private(set) var webSocketPort: Int?
    private var webSocketLines = ""
    /// The broker's process while it runs (a benchmark reads its CPU and memory).
    public private(set) var pid: pid_t?
    private let removeDirectory: UndoOnSignal.Removal
    /// Run inside a network namespace of a `CellularLink`, listening on that side's address; set before
    /// `start()`.
    public var namespace: (name: String, address: String)?
    /// Whether the log has every message (`log_type all`, for a test that fails) or only the broker's
    /// warnings and errors (a benchmark's thousands of messages a second); set before `start()`.
    public var logsEveryMessage = true

    /// `settings` are extra lines for the listener (TLS) and the broker (ACLs, passwords).
    public init(settings: String = "allow_anonymous true", port: Int? = nil) throws {
        self.port = try port ?? LocalProcess.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mosquitto-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        removeDirectory = UndoOnSignal.removal(of: directory.path)
        self.settings = settings
    }

    /// A broker on a free loopback port with `settings`, already started.
    public static func started(settings: String = "allow_anonymous true") throws -> LocalMosquitto {
        let broker = try LocalMosquitto(settings: settings)
        try broker.start()
        return broker
    }

    deinit {
        stop()
        removeDirectory.now()
    }

    /// Whether this broker was started and not stopped since.
    public var isRunning: Bool { pid != nil }

    public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Adds a listener for MQTT over WebSockets on a free loopback port, which also serves the files of
    /// `httpDirectory` when given (mosquitto's `http_dir`): a browser page and its broker on one port.
    /// Call before `start()`. The MQTT listener stays: mosquitto does not start with WebSockets alone.
    @discardableResult
    public func addWebSocketListener(httpDirectory: String? = nil) throws -> Int {
        let port = try LocalProcess.freePort()
        webSocketPort = port
        // `lo`, not 127.0.0.1: with `protocol websockets`, mosquitto 2.0 ignores a listener's address and
        // binds every interface, but honours an interface name.
        webSocketLines = "listener \(port) lo\nprotocol websockets\n" + (httpDirectory.map { "http_dir \($0)\n" } ?? "")
        return port
    }

    public func start() throws {
        let config = """
            # Generated for one test. `user root`: running as root the broker would otherwise switch to the
            # mosquitto user and be unable to write its persistence file here.
            user root
            per_listener_settings false
            persistence true
            persistence_location \(directory.path)/
            autosave_interval 1
            # As deploy/mosquitto-fleet.conf: room for a fleet of 100,000 geofences and more (docs/topics.md).
            max_queued_messages 200000
            set_tcp_nodelay true
            log_dest file \(path("broker.log"))
            \(logsEveryMessage ? "log_type all" : "log_type error\nlog_type warning")
            listener \(port) \(namespace?.address ?? "127.0.0.1")
            \(settings)
            \(webSocketLines)
            """
        try config.write(toFile: path("mosquitto.conf"), atomically: true, encoding: .utf8)
        if let namespace {
            pid = try LocalProcess.spawn(
                CellularLink.ipTool,
                ["netns", "exec", namespace.name, "/usr/sbin/mosquitto", "-c", path("mosquitto.conf")])
            try waitUntilRunningInNamespace()
        } else {
            pid = try LocalProcess.spawn("/usr/sbin/mosquitto", ["-c", path("mosquitto.conf")])
            try waitUntilListening()
        }
    }

    /// SIGTERM, then wait: the broker saves its persistent state on the way out. SIGKILL after 10 s.
    public func stop() {
        guard let pid else { return }
        self.pid = nil
        LocalProcess.terminate(pid)
    }

    /// Reloads the password and ACL files.
    public func reload() {
        if let pid { kill(pid, SIGHUP) }
    }

    /// Inside a namespace the port cannot be tried from here: the broker's log says when it listens.
    private func waitUntilRunningInNamespace() throws {
        guard let pid else { return }
        do {
            try LocalProcess.waitUntilLogged(
                ["Opening ipv4 listen socket on port \(port)", "running"], log: path("broker.log"), pid: pid,
                name: "mosquitto", within: 10)
        } catch {
            self.pid = nil
            throw error
        }
    }

    private func waitUntilListening() throws {
        guard let pid else { return }
        do {
            for port in [port] + (webSocketPort.map { [$0] } ?? []) {
                try LocalProcess.waitUntilListening(port: port, pid: pid, name: "mosquitto", log: path("broker.log"))
            }
        } catch {
            self.pid = nil
            throw error
        }
    }
}
