import Foundation
import Logging
import ServiceLifecycle
import ThreadExecution

#if canImport(Glibc)
    import Glibc
#endif

/// sd_notify without libsystemd: READY=1 once the agent runs, WATCHDOG=1 at half the watchdog interval,
/// STOPPING=1 on the way out. Does nothing when NOTIFY_SOCKET is not set (not under systemd).
package struct SystemdNotifier: Service {
    let socketPath: String?
    let watchdogInterval: Duration?
    let logger: Logger

    package init(environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger) {
        socketPath = environment["NOTIFY_SOCKET"]
        watchdogInterval = environment["WATCHDOG_USEC"].flatMap(Int64.init).map { .microseconds($0 / 2) }
        self.logger = logger
    }

    package func notify(_ state: String) {
        guard let socketPath, !socketPath.isEmpty else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // an abstract socket
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let sent = Array(state.utf8).withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, length)
                }
            }
        }
        if sent < 0 { logger.warning("sd_notify failed", metadata: ["state": "\(state)", "errno": "\(errno)"]) }
    }

    package func run() async throws {
        guard socketPath != nil else {
            try? await gracefulShutdown()
            return
        }
        notify("READY=1\nSTATUS=running")
        guard let watchdogInterval else {
            try? await gracefulShutdown()
            notify("STOPPING=1")
            return
        }
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            notify("WATCHDOG=1")
            try? await Task.sleep(for: watchdogInterval, clock: .serialTimer)
        }
        notify("STOPPING=1")
    }
}
