import AgentFormats
import AgentTestSupport
import Foundation
import GeofenceCore
import LocalServers
import Logging
import ServiceLifecycleTestKit
import TestSupport
import Testing

@testable import AgentOutputs
@testable import GeofenceAgent

/// The event log: one JSON line per event in a local file, read back exactly as `simulate` decides, and
/// rotated at its size.
@Suite(.offTheCooperativePool(.waiting)) struct EventLogTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    func directory() throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("event-log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        return d
    }

    @Test func settingsAreReadWithTheirPathsAndRefusedWithTheirKeys() throws {
        func parse(_ eventLog: String) -> String {
            do {
                let c = try AgentConfiguration.parse(
                    Array(#"{"fleet":"f","vehicle":"v","eventLog":\#(eventLog)}"#.utf8), name: "c")
                let s = c.outputs[EventLogSettings.self]
                return "\(s.path ?? "-") \(s.maximumBytes)"
            } catch {
                return "\(error)"
            }
        }
        #expect(parse(#"{"path":"events.jsonl"}"#) == "events.jsonl 1048576")
        #expect(parse(#"{"path":"e.jsonl","maximumBytes":8192}"#) == "e.jsonl 8192")
        #expect(parse(#"{"path":""}"#) == "c: eventLog.path: must not be empty")
        #expect(
            parse(#"{"maximumBytes":10}"#)
                == "c: eventLog.maximumBytes: expected a whole number from 4096 to 1073741824, found 10.0")
        #expect(parse(#"{"file":"x"}"#).hasPrefix("c: eventLog.file: unknown key"))
        // Off by default, and no output then.
        let off = try AgentConfiguration.parse(Array(#"{"fleet":"f","vehicle":"v"}"#.utf8), name: "c")
        #expect(testOutputs(off).outputs.allSatisfy { !($0 is EventLogOutput) })
    }

    @Test func linesAreAppendedAndTheFileRotatesAtItsSize() async throws {
        let d = try directory()
        defer { try? FileManager.default.removeItem(at: d) }
        let path = d.appendingPathComponent("events.jsonl").path
        let writer = EventLogWriter(path: path, maximumBytes: 4096, logger: logger)
        let line = String(repeating: "x", count: 99)
        await testGracefulShutdown { trigger in
            let running = Task { await writer.run() }
            for _ in 0..<100 { writer.append(line) }
            trigger.triggerGracefulShutdown()
            await running.value
        }
        // 100 lines of 100 bytes: two full files of 40 went to .1 in turn, 20 are in the file.
        let current = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let previous = try String(contentsOfFile: path + ".1", encoding: .utf8).split(separator: "\n")
        #expect(current.count == 20 && previous.count == 40)
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0) <= 4096)
    }
}
