import Foundation
import LocalServers
import TestSupport
import Testing

/// The dashboard's fleet model in Node, against the vectors of the agent's topics and track payloads that
/// the Swift tests check the agent with (`Tests/JavaScript/fleet.test.js`): a dashboard that reads another
/// layout or decodes a track otherwise fails here, before any browser.
@Suite(.offTheCooperativePool(.waiting)) struct DashboardModelTests {
    @Test func theFleetModelReadsTheAgentsTopicsAndTrackVectors() throws {
        let node = try #require(
            ["/usr/bin/node", "/usr/bin/nodejs", "/usr/local/bin/node"].first {
                FileManager.default.isExecutableFile(atPath: $0)
            }, "Node.js is installed (scripts/setup --test)")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("node-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: output) }
        let pid = try LocalProcess.spawn(
            node, ["--test", Repository.url("Tests/JavaScript").path], standardOutput: output.path,
            standardError: output.path)
        let status = LocalProcess.exitStatus(of: pid, within: 120)
        if status == nil { LocalProcess.terminate(pid) }
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(status == 0, "node --test Tests/JavaScript:\n\(text.suffix(3000))")
        #expect(text.contains("# fail 0"), "\(text.suffix(3000))")
    }
}
