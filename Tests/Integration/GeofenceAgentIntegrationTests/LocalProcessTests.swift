import AgentTestSupport
import Foundation
import LocalServers
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The helper that starts the agents, brokers and receivers the tests run.
@Suite(.offTheCooperativePool(.waiting)) struct LocalProcessTests {
    /// A child gets its standard descriptors and nothing else of the test process, so that no server lives
    /// on holding a pipe or socket another test waits to see closed.
    @Test func aChildHoldsOnlyItsStandardDescriptors() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        let listing = try AgentBinary.temporaryFile("", suffix: ".fds")
        defer { try? FileManager.default.removeItem(atPath: listing) }
        let pid = try LocalProcess.spawn("/bin/ls", ["/proc/self/fd"], standardOutput: listing)
        #expect(LocalProcess.exitStatus(of: pid, within: 60) == 0)
        let fds = try String(contentsOfFile: listing, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }
        // ls's own descriptor for the directory it lists is the one above the three.
        #expect(fds.filter { $0 > 3 }.isEmpty, "\(fds), the pipe was \(ends)")
    }

    @Test func anExitStatusIsTheCodeOrTheSignal() throws {
        let exited = try LocalProcess.spawn("/bin/sh", ["-c", "exit 3"])
        #expect(LocalProcess.exitStatus(of: exited, within: 60) == 3)
        let killed = try LocalProcess.spawn("/bin/sh", ["-c", "kill -9 $$"])
        #expect(LocalProcess.exitStatus(of: killed, within: 60) == 128 + SIGKILL)
    }
}
