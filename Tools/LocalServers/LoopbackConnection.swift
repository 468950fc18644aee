import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// TCP on 127.0.0.1 for the tests' and benchmarks' servers and bare clients: the one place that fills a
/// `sockaddr_in`.
public enum LoopbackConnection {
    /// A connected socket (the caller closes it), or nil when nothing accepts on `port`. With
    /// `receiveTimeout`, a read waits at most that many seconds.
    public static func open(port: Int, receiveTimeout seconds: Int? = nil) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        if let seconds {
            var timeout = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        guard connect(fd, port: port) else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Connects `fd` to 127.0.0.1:`port`.
    public static func connect(_ fd: Int32, port: Int) -> Bool {
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Binds `fd` to 127.0.0.1:`port` (0: a port the kernel picks); the port bound, or nil when it failed.
    public static func bind(_ fd: Int32, port: Int = 0) -> Int? {
        var address = loopback(port: port)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
