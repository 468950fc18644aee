/// One of the gazetteer file's sections, read in place: the bytes stay where the file's owner holds them (a
/// mapping of the file, or one copy of it), so a table costs no memory of its own and the pages a lookup
/// never reads need not be in memory at all. Valid while the `Gazetteer` that holds it keeps its bytes.
struct GazetteerTable<Element: BitwiseCopyable>: RandomAccessCollection, @unchecked Sendable {
    // Points into bytes that are never written after they are read: safe to share.
    private let buffer: UnsafeBufferPointer<Element>

    /// The elements at the start of `bytes`, which the caller has checked to hold them, suitably aligned.
    init(_ bytes: UnsafeRawBufferPointer, count: Int) {
        buffer =
            count == 0
            ? UnsafeBufferPointer(start: nil, count: 0)
            : UnsafeBufferPointer(start: bytes.baseAddress!.assumingMemoryBound(to: Element.self), count: count)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { buffer.count }

    subscript(position: Int) -> Element { buffer[position] }

    /// The elements as a buffer, for loops that must not retain or copy anything per step.
    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        try body(buffer)
    }
}

/// A gazetteer file's bytes copied into memory of the gazetteer's own, aligned for its tables: what
/// `Gazetteer(fileBytes:)` reads from when the caller cannot keep the bytes.
final class CopiedGazetteerBytes: Sendable {
    // Written once in init and only read after: safe to share.
    nonisolated(unsafe) let bytes: UnsafeRawBufferPointer

    init(_ source: UnsafeRawBufferPointer) {
        let base = UnsafeMutableRawPointer.allocate(
            byteCount: max(source.count, 1), alignment: GazetteerFormat.cardBytes)
        if let from = source.baseAddress { base.copyMemory(from: from, byteCount: source.count) }
        bytes = UnsafeRawBufferPointer(start: base, count: source.count)
    }

    deinit { UnsafeMutableRawPointer(mutating: bytes.baseAddress!).deallocate() }
}
