import CGPS
import Foundation

/// What can go wrong talking to gpsd, with gpsd's own messages.
public enum GPSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// gps_open failed: `code` is libgps's negative code (-6: cannot connect, -2: bad host), `message`
    /// is gps_errstr's text.
    case cannotConnect(host: String, port: String, code: Int32, message: String)
    /// WATCH could not be sent.
    case watchFailed(errno: Int32)
    /// gpsd closed the connection (it stopped or restarted).
    case connectionClosed
    /// A read failed for another reason.
    case readFailed(errno: Int32)

    public var description: String {
        switch self {
        case .cannotConnect(let host, let port, let code, let message):
            return "cannot connect to gpsd at \(host):\(port): \(message) (libgps code \(code))"
        case .watchFailed(let e):
            return "gpsd did not accept WATCH: \(String(cString: strerror(e)))"
        case .connectionClosed:
            return "gpsd closed the connection"
        case .readFailed(let e):
            return "reading from gpsd failed: \(String(cString: strerror(e)))"
        }
    }
}
