import AgentFormats
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Serves `GET /metrics` in Prometheus' text format over plain HTTP/1.1, one request per connection.
/// Accepting and reading block, so they run on a thread of their own, never on the cooperative pool; a
/// graceful shutdown closes the socket, which ends the thread at once.
package final class MetricsServer: Service, Sendable {
    package let host: String
    package let port: Int
    private let body: @Sendable () -> String
    private let logger: Logger
    private let socket = Mutex<Int32>(-1)

    /// Binds at once, so that a taken port is reported at start; `body` gives the text at each scrape.
    package init(host: String, port: Int, logger: Logger, body: @escaping @Sendable () -> String) throws(AgentError) {
        self.host = host
        self.logger = logger
        self.body = body
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw AgentError("metrics: cannot make a socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw AgentError("metrics.listen: '\(host)' is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw AgentError("metrics: cannot listen on \(host):\(port): \(reason)")
        }
        // Port 0: the kernel's choice, read back.
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        socket.withLock { $0 = fd }
    }

    package func run() async throws {
        let fd = socket.withLock { $0 }
        let thread = Thread { [self] in self.serve(fd) }
        thread.name = "metrics server"
        thread.start()
        logger.info("metrics served", metadata: ["address": "http://\(host):\(port)/metrics"])
        try? await gracefulShutdown()
        stop()
    }

    /// Closes the listening socket; the thread's accept then fails and it ends.
    func stop() {
        socket.withLock { fd in
            guard fd >= 0 else { return }
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
            fd = -1
        }
    }

    private func serve(_ listening: Int32) {
        while true {
            let client = accept(listening, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            respond(client)
            close(client)
        }
    }

    /// Reads the request head (at most 8 KB, 2 s) and answers it.
    private func respond(_ fd: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 2048)
        while head.count < 8192, !head.ends(with: [13, 10, 13, 10]) {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return }
            head += chunk[0..<n]
            if head.firstRange(of: [13, 10, 13, 10]) != nil { break }
        }
        let requestLine = String(decoding: head.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self).split(separator: " ")
        let (status, contentType, text): (String, String, String)
        if requestLine.count >= 2, requestLine[0] == "GET",
            requestLine[1] == "/metrics" || requestLine[1].hasPrefix("/metrics?")
        {
            (status, contentType, text) = ("200 OK", "text/plain; version=0.0.4; charset=utf-8", body())
        } else if requestLine.count >= 2, requestLine[0] != "GET" {
            (status, contentType, text) = ("405 Method Not Allowed", "text/plain; charset=utf-8", "only GET /metrics\n")
        } else {
            (status, contentType, text) = (
                "404 Not Found", "text/plain; charset=utf-8", "only /metrics is served here\n"
            )
        }
        let payload = Array(text.utf8)
        let response =
            Array(
                "HTTP/1.1 \(status)\r\nContent-Type: \(contentType)\r\nContent-Length: \(payload.count)\r\nConnection: close\r\n\r\n"
                    .utf8) + payload
        var sent = 0
        while sent < response.count {
            let n = response[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
