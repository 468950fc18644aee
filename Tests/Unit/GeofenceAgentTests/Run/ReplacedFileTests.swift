import AgentOutputs
import AgentTestSupport
import Foundation
import TestSupport
import Testing

/// The status file is replaced whole, and a failure says which file and why.
@Suite(.offTheCooperativePool(.computing)) struct ReplacedFileTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("replaced-\(UUID().uuidString)").path

    @Test func aFileIsReplacedWholeAndNoTemporaryIsLeft() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/status.json"
        try ReplacedFile.write(Array(String(repeating: "long ", count: 100).utf8), to: path)
        try ReplacedFile.write(Array("short".utf8), to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "short")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["status.json"])
    }

    @Test func aFailureNamesTheFileAndTheReason() {
        let path = directory + "/missing/status.json"
        #expect {
            try ReplacedFile.write(Array("{}".utf8), to: path)
        } throws: { error in
            "\(error)" == "cannot create \(path).tmp: No such file or directory"
        }
    }
}
