import Foundation
import SQLite
import TestSupport
import Testing

@testable import GeofenceStore

#if canImport(Glibc)
    import Glibc
#endif

/// The write-ahead log's file is written once at its kept size. Every commit then overwrites blocks instead
/// of appending, the file is kept across restarts, and the zeros after its last frame are never read as data.
@Suite(.offTheCooperativePool(.waiting)) struct KeptLogTests {
    /// The log's size, the bytes the disk holds for it, and its inode.
    func logFile(_ path: String) -> (size: Int, allocated: Int, inode: UInt64)? {
        var info = stat()
        guard stat(StorePaths(path).writeAheadLog, &info) == 0 else { return nil }
        return (Int(info.st_size), Int(info.st_blocks) * 512, UInt64(info.st_ino))
    }

    /// Copies a store's database and log as the disk holds them: a power cut after the last commit's sync.
    func copyAsAtAPowerCut(_ path: String) throws -> String {
        let copy = temporaryStorePath()
        for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix) }
        return copy
    }

    @Test func aFreshStoresLogIsWrittenToItsSizeAndCommitsDoNotGrowIt() async throws {
        let path = temporaryStorePath()
        let store = try await AgentStore.open(path: path, logger: quietLogger)
        let opened = try #require(logFile(path))
        #expect(opened.size == AgentStore.logSizeLimit)
        #expect(opened.allocated >= AgentStore.logSizeLimit, "written, not sparse: \(opened.allocated) bytes on disk")
        for k in 0..<200 { try await store.setSetting("k\(k)", String(repeating: "v", count: 3_000)) }
        #expect(await store.logFrames >= 200)
        #expect(logFile(path)?.size == AgentStore.logSizeLimit, "200 commits were written inside the file")
        await store.close()
    }

    @Test func theLogIsKeptAcrossARestartAndEverythingReadsTheSame() async throws {
        let path = temporaryStorePath()
        do {
            let store = try await AgentStore.open(path: path, logger: quietLogger)
            for i in 0..<20 {
                _ = try await store.putCondition(
                    monitor: "m", identifier: "c\(i)", condition: try .circle(center: depot, radius: 100),
                    definition: "{}", source: "local")
            }
            for k in 0..<50 { try await store.setSetting("k\(k)", "\(k)") }
            await store.close()
        }
        let kept = try #require(logFile(path), "the log's file is kept at a stop")
        #expect(kept.size == AgentStore.logSizeLimit)
        // What the CLI does beside a stopped agent.
        let reader = try #require(try StoreReader.open(path))
        #expect(try reader.conditions().count == 20)
        let store = try await reopenStore(path: path)
        for k in 0..<50 { #expect(try await store.setting("k\(k)") == "\(k)") }
        let reopened = try #require(logFile(path))
        #expect(reopened.inode == kept.inode && reopened.size == kept.size, "the same file, not written again")
        await store.close()
    }

    @Test func aPowerCutLosesNoCommitAndTheZerosAfterTheLastFrameAreNoFrame() async throws {
        let path = temporaryStorePath()
        let store = try await AgentStore.open(path: path, logger: quietLogger)
        for k in 0..<30 { try await store.setSetting("k\(k)", "\(k)") }
        let copy = try copyAsAtAPowerCut(path)
        await store.close()
        let recovered = try await reopenStore(path: copy)
        for k in 0..<30 { #expect(try await recovered.setting("k\(k)") == "\(k)") }
        await recovered.close()
    }

    /// The zeros go after the frames a live connection has written, never over them.
    @Test func allocatingBehindALiveConnectionLeavesItsFramesWhole() throws {
        let path = temporaryStorePath()
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
        for k in 0..<40 {
            try db.statement("INSERT INTO t VALUES (?1, ?2)").bind(.int(k), .blob([UInt8](repeating: 7, count: 2_000)))
                .run()
        }
        let before = try #require(logFile(path)).size
        try db.keepLog(size: 1 << 20)
        try db.allocateLog()
        #expect(before < 1 << 20 && logFile(path)?.size == 1 << 20)
        try db.statement("INSERT INTO t VALUES (40, x'01')").run()
        let copy = try copyAsAtAPowerCut(path)
        db.close()
        let recovered = try Database(path: copy)
        let count = try recovered.statement("SELECT count(*), sum(length(v)) FROM t")
        #expect(try count.step())
        #expect(count.int(0) == 41 && count.int(1) == 40 * 2_000 + 1)
    }

    /// A log that outgrew its size (a long outage) is cut at the close, by SQLite's rule, and written again
    /// at the next open.
    @Test func aLogThatOutgrewItsSizeIsCutAtTheCloseAndWrittenAgain() throws {
        let path = temporaryStorePath()
        do {
            let db = try Database(path: path)
            try db.keepLog(size: 1 << 20)
            try db.allocateLog()
            #expect(logFile(path) == nil, "nothing written yet: no log to allocate")
            try db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
            try db.allocateLog()
            #expect(logFile(path)?.size == 1 << 20)
            try db.transaction {
                for k in 0..<1_000 {
                    try db.statement("INSERT INTO t VALUES (?1, ?2)").bind(
                        .int(k), .blob([UInt8](repeating: 1, count: 3_000))
                    )
                    .run()
                }
            }
            #expect((logFile(path)?.size ?? 0) > 1 << 20)
            db.close()
        }
        #expect((logFile(path)?.size ?? 0) == 0, "cut to nothing at the close")
        let db = try Database(path: path)
        try db.keepLog(size: 1 << 20)
        try db.allocateLog()
        #expect(logFile(path)?.size == 1 << 20)
        let count = try db.statement("SELECT count(*) FROM t")
        #expect(try count.step() && count.int(0) == 1_000)
        db.close()
    }
}
