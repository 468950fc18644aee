import AgentTestSupport
import Foundation
import Geocoding
import GeofenceCore
import SystemMemory
import TestSupport
import Testing

@testable import AgentFormats

/// The gazetteer read in place from a mapping of its file, against the same file copied into memory.
@Suite(.offTheCooperativePool(.waiting)) struct GazetteerFileTests {
    static let original = GazetteerFile.locate()!

    /// A private copy of the gazetteer file, so that its mapping is this test's alone.
    func copiedFile() throws -> (path: String, directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gazetteer-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("gazetteer.bin").path
        try FileManager.default.copyItem(atPath: Self.original, toPath: path)
        return (path, directory)
    }

    /// The resident kilobytes of this process's mappings of `path`.
    func residentKilobytes(of path: String) -> Int {
        var inMapping = false
        var total = 0
        // Read to its end: a /proc file says it is empty, and a read by its size stops short.
        let smaps = FileHandle(forReadingAtPath: "/proc/self/smaps")!.readDataToEndOfFile()
        for line in String(decoding: smaps, as: UTF8.self).split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                inMapping = line.hasSuffix(" " + path)
            } else if inMapping, line.hasPrefix("Rss:") {
                total += Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
            }
        }
        return total
    }

    /// Why the file at `path` was refused ("read" when it was not).
    func loadError(_ path: String) -> String {
        do {
            _ = try GazetteerFile.load(path)
            return "read"
        } catch {
            return "\(error)"
        }
    }

    @Test func theMappedFileAnswersAsTheCopyAndHoldsOnlyThePagesLookupsRead() throws {
        let (path, directory) = try copiedFile()
        defer { try? FileManager.default.removeItem(at: directory) }
        let mapped = try GazetteerFile.load(path)
        // The load checked every card and key, then gave the pages back.
        #expect(residentKilobytes(of: path) < 1_024)
        let copied = try Gazetteer(fileBytes: try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(mapped.count == copied.count)
        var rng = SplitMix64(seed: 11)
        for _ in 0..<2_000 {
            let c = Coordinate(
                latitude: Double.random(in: -60...75, using: &rng),
                longitude: Double.random(in: -180...180, using: &rng))
            #expect(try mapped.reverse(c) == copied.reverse(c), "\(c)")
        }
        for name in ["Zwolle, NL", "Split", "Saint-Paul, RE", "São Paulo", "Zürich"] {
            #expect((try? mapped.forward(name)) == (try? copied.forward(name)), "\(name)")
        }
        let resident = residentKilobytes(of: path)
        #expect(resident > 0 && resident < 20_000, "the lookups read \(resident) KB of the file's pages back in")
    }

    @Test func aFileThatIsNotAGazetteerIsRefusedWithItsPathAndReason() throws {
        let (path, directory) = try copiedFile()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let truncated = directory.appendingPathComponent("truncated.bin").path
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))
        #expect(loadError(truncated).contains(truncated) && loadError(truncated).contains("truncated"))
        var older = bytes
        older[4] = 3
        let version3 = directory.appendingPathComponent("version3.bin").path
        try older.write(to: URL(fileURLWithPath: version3))
        #expect(loadError(version3).contains("gazetteer version 3; this agent reads version 4"))
        let empty = directory.appendingPathComponent("empty.bin").path
        try Data().write(to: URL(fileURLWithPath: empty))
        #expect(loadError(empty).contains("not a gazetteer file"))
        let missing = directory.appendingPathComponent("missing.bin").path
        #expect(loadError(missing).contains("cannot read \(missing): No such file or directory"))
    }
}
