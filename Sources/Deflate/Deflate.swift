import CZlib

/// zlib's one-shot compression, typed: the store keeps geofence definitions (GeoJSON text, mostly
/// digits) in about half the bytes.
public enum Deflate {
    /// Why bytes could not be inflated.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let code: Int32
        public var description: String {
            switch code {
            case Z_DATA_ERROR: "compressed data is damaged (zlib Z_DATA_ERROR)"
            case Z_BUF_ERROR: "compressed data does not inflate to its recorded size (zlib Z_BUF_ERROR)"
            case Z_MEM_ERROR: "out of memory inflating data (zlib Z_MEM_ERROR)"
            default: "zlib error \(code)"
            }
        }
    }

    /// The bytes in zlib's format, at the default level.
    public static func compress(_ bytes: [UInt8]) -> [UInt8] {
        var size = compressBound(uLong(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let rc = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { i in
                compress2(o.baseAddress, &size, i.baseAddress, uLong(i.count), Z_DEFAULT_COMPRESSION)
            }
        }
        // compress2 fails only without memory or with a buffer smaller than compressBound's.
        precondition(rc == Z_OK, "zlib compress2 failed: \(rc)")
        out.removeLast(out.count - Int(size))
        return out
    }

    /// The original bytes, which were `size` long.
    public static func decompress(_ bytes: [UInt8], size: Int) throws(Failure) -> [UInt8] {
        var length = uLong(size)
        var out = [UInt8](repeating: 0, count: max(size, 1))
        let rc = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { i in
                uncompress(o.baseAddress, &length, i.baseAddress, uLong(i.count))
            }
        }
        guard rc == Z_OK, Int(length) == size else { throw Failure(code: rc == Z_OK ? Z_BUF_ERROR : rc) }
        out.removeLast(out.count - size)
        return out
    }
}
