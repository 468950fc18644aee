import Foundation
import LocalServers
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The tests' broker: our own mosquitto on a free loopback port.
typealias TestBroker = LocalMosquitto

/// The test certificates (LocalServers).
typealias TestCertificates = LocalCertificates

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
