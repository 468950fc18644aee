import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP connection to a server of our own on 127.0.0.1, for the benchmarks' and tests' bare clients.
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
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(fd)
            return nil
        }
        return fd
    }
}
