import Foundation
import LocalServers
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The tests' broker: our own mosquitto on a free loopback port.
typealias TestBroker = LocalMosquitto

/// A CA and a server certificate for 127.0.0.1, made with openssl at test time; and a second CA that
/// did not sign anything, for the wrong-CA test.
struct TestCertificates {
    let directory: URL
    var caFile: String { directory.appendingPathComponent("ca.crt").path }
    var otherCAFile: String { directory.appendingPathComponent("other-ca.crt").path }
    var certificateFile: String { directory.appendingPathComponent("server.crt").path }
    var keyFile: String { directory.appendingPathComponent("server.key").path }

    init(in directory: URL) throws {
        self.directory = directory
        let openssl = "/usr/bin/openssl"
        try "subjectAltName=IP:127.0.0.1\n".write(to: directory.appendingPathComponent("san.ext"), atomically: true, encoding: .utf8)
        for ca in ["ca", "other-ca"] {
            try LocalProcess.run(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(ca).key", "-out", "\(ca).crt",
                                         "-days", "2", "-subj", "/CN=geofence-agent test \(ca)"], in: directory)
        }
        try LocalProcess.run(openssl, ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
                                     "-subj", "/CN=127.0.0.1"], in: directory)
        try LocalProcess.run(openssl, ["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                                     "-out", "server.crt", "-days", "2", "-extfile", "san.ext"], in: directory)
    }
}

/// A log handler that keeps every line, so tests can check what was (and was not) logged.
final class CapturingLogHandler: LogHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lock.lock()
        storage.append("\(event.level) \(event.message)")
        lock.unlock()
    }

    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}

func testLogger(_ handler: CapturingLogHandler = CapturingLogHandler()) -> Logger {
    Logger(label: "test") { _ in handler }
}

/// Waits until `condition` holds, polling, or fails after `seconds`.
func eventually(_ seconds: Double = 10, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}
