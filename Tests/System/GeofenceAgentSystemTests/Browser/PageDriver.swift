import AgentTestSupport
import Foundation
import LocalServers
import TestSupport

/// One page in headless Chromium (Debian's chromium-headless-shell), driven by Playwright through
/// `page_driver.py`: the test sends a command and blocks for its answer, so it decides what happens
/// between the page's steps (it owns the broker and the agent). Waits poll the page's state, never sleep.
///
/// Blocking: use from a test that runs off the cooperative pool.
final class PageDriver {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let browser = "/usr/lib/chromium/chromium-headless-shell"
    /// Where the screenshots go: beside the build, kept after the run for a person to look at.
    static let outputDirectory = Repository.url(".build/test-output/dashboard")

    /// What is missing to run a browser test, or nil. `scripts/setup --test` installs all of it.
    static var missing: String? {
        if !FileManager.default.isExecutableFile(atPath: browser) {
            return "\(browser) (Debian's chromium-headless-shell)"
        }
        if !FileManager.default.fileExists(
            atPath: Repository.url("dashboard/vendor/mqtt.min.js").path)
        {
            return "dashboard/vendor/ (scripts/dashboard)"
        }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import playwright"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return "python3" }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? nil : "Playwright for python3 (pip)"
    }

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = Data()
    private let log: URL

    init() throws {
        if let missing = Self.missing {
            throw Failure(description: "the browser tests need \(missing): run scripts/setup --test")
        }
        try FileManager.default.createDirectory(at: Self.outputDirectory, withIntermediateDirectories: true)
        log = Self.outputDirectory.appendingPathComponent("driver-\(UUID().uuidString.prefix(8)).log")
        try Data().write(to: log)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Repository.url("Tests/System/GeofenceAgentSystemTests/Browser/page_driver.py").path,
        ]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
    }

    deinit {
        if process.isRunning {
            try? input.fileHandleForWriting.close()
            if !exited(within: 10) { process.terminate() }
        }
        try? FileManager.default.removeItem(at: log)
    }

    /// Sends one command and returns its answer's value; throws with the command and the page's error.
    @discardableResult
    func send(_ command: [String: Any]) throws -> Any? {
        var line = try JSONSerialization.data(withJSONObject: command)
        line.append(0x0A)
        try input.fileHandleForWriting.write(contentsOf: line)
        let answer = try readLine()
        guard let object = try JSONSerialization.jsonObject(with: answer) as? [String: Any] else {
            throw Failure(description: "the driver answered \(String(decoding: answer, as: UTF8.self))")
        }
        guard object["ok"] as? Bool == true else {
            throw Failure(
                description:
                    "\(command["op"] ?? "") \(command["js"] ?? command["url"] ?? ""): \(object["error"] ?? "failed")")
        }
        return object["value"]
    }

    func open(_ url: String, insecure: Bool = false) throws {
        try send(["op": "open", "url": url, "insecure": insecure])
    }

    /// Waits until a JavaScript expression is truthy in the page, and returns its value.
    @discardableResult
    func wait(_ js: String, timeout: Double = 90) throws -> Any? {
        try send(["op": "wait", "js": js, "timeout": timeout])
    }

    @discardableResult
    func evaluate(_ js: String) throws -> Any? { try send(["op": "eval", "js": js]) }

    /// Saves a screenshot in `outputDirectory` and returns its path.
    func screenshot(_ name: String) throws -> String {
        let path = Self.outputDirectory.appendingPathComponent(name).path
        try send(["op": "screenshot", "path": path])
        return path
    }

    /// The page's uncaught errors and console errors so far.
    func pageErrors() throws -> [String] { try send(["op": "errors"]) as? [String] ?? [] }

    func close() throws {
        try send(["op": "close"])
        try input.fileHandleForWriting.close()
        _ = exited(within: 20)
    }

    /// Foundation's Process reaps its own child: wait for it to say so.
    private func exited(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        return !process.isRunning
    }

    private func readLine() throws -> Data {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                return Data(line)
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw Failure(description: "the page driver ended: \(text.suffix(2000))")
            }
            buffer.append(chunk)
        }
    }
}

extension LocalMosquitto {
    /// A broker of the test's own whose WebSocket listener serves `dashboard/` and carries the page's MQTT,
    /// started; returns it and the listener's port.
    static func servingDashboard(logsEveryMessage: Bool = true) throws -> (LocalMosquitto, Int) {
        let broker = try LocalMosquitto()
        broker.logsEveryMessage = logsEveryMessage
        let port = try broker.addWebSocketListener(
            httpDirectory: Repository.url("dashboard").path)
        try broker.start()
        return (broker, port)
    }
}
