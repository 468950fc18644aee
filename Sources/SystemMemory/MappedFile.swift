import Glibc

/// A file mapped read-only into memory, unmapped with the last reference: the gazetteer's bytes, read in
/// place. Its pages are the file's: the kernel reads them in as they are touched and can take them back
/// under memory pressure, which it cannot do with memory the process allocated (a vehicle has no swap).
///
/// The file must not change while it is mapped: replace it by renaming a new one over it, as
/// scripts/gazetteer does.
package final class MappedFile: Sendable {
    /// The file's bytes; empty for an empty file.
    nonisolated(unsafe) package let bytes: UnsafeRawBufferPointer

    /// Maps the file at `path`; the error is the system's reason.
    package init(path: String) throws(MappedFileError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MappedFileError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw MappedFileError(path: path, reason: String(cString: strerror(errno))) }
        let size = Int(info.st_size)
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let base, base != MAP_FAILED else {
            throw MappedFileError(path: path, reason: String(cString: strerror(errno)))
        }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
    }

    /// Lets go of the pages read so far (their contents stay in the file and the page cache; the next read
    /// maps them in again): after a load that checked every byte, only what lookups read stays resident.
    package func dropResidentPages() {
        guard let base = bytes.baseAddress else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base), bytes.count, MADV_DONTNEED)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}

/// Why a file could not be mapped.
package struct MappedFileError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var description: String { "cannot read \(path): \(reason)" }
}
