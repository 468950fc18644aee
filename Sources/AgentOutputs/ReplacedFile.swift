#if canImport(Glibc)
    import Glibc
#endif

/// A file replaced whole through a temporary one beside it and a rename: a reader sees the old file or the
/// new one, never half of one. Not synced: for files that say what is, which the agent writes again soon
/// after a restart (the status, node_exporter's textfile); on a flash card an `fsync` costs
/// milliseconds and a journal commit.
package enum ReplacedFile {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package static func write(_ bytes: some Collection<UInt8>, to path: String) throws(Failure) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("cannot create \(temporary)") }
        let written = Array(bytes).withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        let writeError = errno
        close(fd)
        guard written else {
            unlink(temporary)
            throw Failure(description: "cannot write \(temporary): \(String(cString: strerror(writeError)))")
        }
        guard rename(temporary, path) == 0 else {
            let failure = failure("cannot rename \(temporary) to \(path)")
            unlink(temporary)
            throw failure
        }
    }

    private static func failure(_ what: String) -> Failure {
        Failure(description: "\(what): \(String(cString: strerror(errno)))")
    }
}
