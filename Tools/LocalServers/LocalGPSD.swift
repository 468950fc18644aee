import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A gpsd of our own: `gpsd -N` on a free loopback port with a control socket in its own directory.
/// Without `-n` gpsd opens its sources only when the first client watches, so a feed loses nothing.
/// Started, killed and restarted by PID only.
public final class LocalGPSD: @unchecked Sendable {
    public private(set) var port: Int
    /// Whether the port was chosen here (and may be chosen again when another server took it first).
    private let portChosen: Bool
    /// A restart keeps its port: its clients know it.
    private var hasStarted = false
    public let directory: URL
    private var sources: [String]
    private var pid: pid_t?
    private let removeDirectory: UndoOnSignal.Removal

    public static let executable = "/usr/sbin/gpsd"
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    public init(sources: [String], port: Int? = nil) throws {
        self.port = try port ?? LocalProcess.freePort()
        portChosen = port == nil
        self.sources = sources
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gpsd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        removeDirectory = UndoOnSignal.removal(of: directory.path)
    }

    deinit {
        stop()
        removeDirectory.now()
    }

    public var controlSocket: String { directory.appendingPathComponent("control.sock").path }
    public var isRunning: Bool { pid != nil }

    /// Starts gpsd and checks that what answers on its port is gpsd (its `VERSION` greeting): a free port is
    /// released before gpsd binds it, and a server another test starts meanwhile can take it, leaving gpsd on
    /// IPv6 alone. Then it starts again on another port (when the port was chosen here, at the first start).
    public func start() throws {
        guard pid == nil else { return }
        for attempt in 1...3 {
            try? FileManager.default.removeItem(atPath: controlSocket)
            // -b: never write to a receiver (it is a recording); -N: stay in the foreground.
            let started = try LocalProcess.spawn(
                Self.executable, ["-N", "-b", "-S", "\(port)", "-F", controlSocket] + sources)
            pid = started
            do {
                try LocalProcess.waitUntilListening(port: port, pid: started, name: "gpsd")
            } catch {
                pid = nil
                throw error
            }
            if hasStarted || !portChosen || attempt == 3 || Self.greets(port: port) {
                hasStarted = true
                return
            }
            stop()
            port = try LocalProcess.freePort()
        }
    }

    /// Whether the server on `port` (loopback) sends gpsd's `{"class":"VERSION"` greeting within 5 s.
    static func greets(port: Int) -> Bool {
        guard let fd = LoopbackConnection.open(port: port, receiveTimeout: 5) else { return false }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = read(fd, &buffer, buffer.count)
        return count > 0 && String(decoding: buffer[0..<count], as: UTF8.self).contains("\"class\":\"VERSION\"")
    }

    /// SIGTERM and reap.
    public func stop() {
        guard let pid else { return }
        self.pid = nil
        LocalProcess.terminate(pid, grace: 5)
    }

    /// SIGKILL, as a crash.
    public func kill() {
        guard let pid else { return }
        self.pid = nil
        Glibc.kill(pid, SIGKILL)
        _ = LocalProcess.reap(pid, within: 5)
    }

    /// Adds ("+") or removes ("-") a source through the control socket, as hotplug scripts do.
    @discardableResult
    public func control(_ command: String) throws -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LocalServerError("socket(AF_UNIX) failed") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(controlSocket.utf8CString)
        guard path.count <= MemoryLayout.size(ofValue: address.sun_path) else {
            throw LocalServerError("control socket path too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            path.withUnsafeBytes { raw.copyMemory(from: $0) }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
        guard connected else { throw LocalServerError("cannot connect to gpsd's control socket \(controlSocket)") }
        let line = Array((command + "\n").utf8)
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var reply = [UInt8](repeating: 0, count: 64)
        let n = recv(fd, &reply, reply.count, 0)
        let text =
            n > 0 ? String(decoding: reply[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : ""
        guard text == "OK" else {
            throw LocalServerError("gpsd control \(command): \(text.isEmpty ? "no reply" : text)")
        }
        return text
    }
}
