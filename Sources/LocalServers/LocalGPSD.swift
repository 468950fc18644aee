import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A gpsd of our own: `gpsd -N` on a free loopback port with a control socket in its own directory.
/// Without `-n` gpsd opens its sources only when the first client watches, so a feed loses nothing.
/// Started, killed and restarted by PID only.
public final class LocalGPSD: @unchecked Sendable {
    public let port: Int
    public let directory: URL
    private var sources: [String]
    private var pid: pid_t?

    public static let executable = "/usr/sbin/gpsd"
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    public init(sources: [String], port: Int? = nil) throws {
        self.port = try port ?? LocalProcess.freePort()
        self.sources = sources
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gpsd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    public var controlSocket: String { directory.appendingPathComponent("control.sock").path }
    public var isRunning: Bool { pid != nil }

    public func start() throws {
        guard pid == nil else { return }
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
