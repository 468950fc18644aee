import Foundation
import GeofenceCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A cellular-like link for tests: two network namespaces of our own (a vehicle and a broker), one TUN
/// device in each, and a relay thread that holds both devices and moves IP packets between them with a
/// delay, jitter that reorders, correlated loss and outages. This kernel has no netem
/// (`../shared/notes/links-and-budgets.md`). Needs root; the namespaces are deleted by `stop()`.
///
/// Run a process on either side with `command(in:_:)`; the vehicle reaches the broker at `brokerAddress`.
public final class CellularLink: @unchecked Sendable {
    /// How the link behaves, each way.
    public struct Profile: Sendable, Equatable {
        public var name: String
        /// One-way delay and its jitter (uniform within ±), seconds.
        public var delay: Double
        public var jitter: Double
        /// Share of packets lost, and the chance that a loss follows a loss beyond that share (lag-1).
        public var loss: Double
        public var lossCorrelation: Double
        /// An outage of `outageLength` seconds every `outageEvery` seconds (nil: none), the first
        /// `firstOutage` seconds (nil: `outageEvery`) after the vehicle's first TCP packet: the schedule
        /// follows the agent's connection, whose moment a busy machine moves, not the link's making.
        public var outageEvery: Double?
        public var outageLength: Double
        public var firstOutage: Double?

        public init(
            name: String, delay: Double, jitter: Double, loss: Double, lossCorrelation: Double = 0,
            outageEvery: Double? = nil, outageLength: Double = 0, firstOutage: Double? = nil
        ) {
            self.name = name
            self.delay = delay
            self.jitter = jitter
            self.loss = loss
            self.lossCorrelation = lossCorrelation
            self.outageEvery = outageEvery
            self.outageLength = outageLength
            self.firstOutage = firstOutage
        }

        /// The same link with its first outage `seconds` after the schedule's start.
        public func firstOutage(at seconds: Double) -> Profile {
            var profile = self
            profile.firstOutage = seconds
            return profile
        }

        /// No delay, no loss: the relay alone.
        public static let clean = Profile(name: "clean", delay: 0, jitter: 0, loss: 0)
        /// 150 ± 100 ms one way, 5% loss with 25% correlation, 20 s outages every 60 s.
        public static let cellular = Profile(
            name: "cellular", delay: 0.15, jitter: 0.1, loss: 0.05, lossCorrelation: 0.25,
            outageEvery: 60, outageLength: 20)
        /// 600 ± 400 ms, 20% loss, 45 s outages every 90 s.
        public static let bad = Profile(
            name: "bad", delay: 0.6, jitter: 0.4, loss: 0.2, outageEvery: 90, outageLength: 45)
    }

    public let profile: Profile
    /// The namespaces' names.
    public let vehicle: String
    public let broker: String
    public let vehicleAddress: String
    public let brokerAddress: String
    static let device = "gfa0"

    private let fds: (vehicle: Int32, broker: Int32)
    private let wake: (read: Int32, write: Int32)
    private let state = Mutex(RelayState())
    private let finished = DispatchSemaphore(value: 0)
    /// The namespaces' deletion, should a signal end the process before `stop()`.
    private let undo: Int

    struct RelayState {
        var stopping = false
        /// A cut made by the test: nothing passes until then (monotonic nanoseconds).
        var cutUntil: UInt64 = 0
        /// When the outage schedule starts (monotonic nanoseconds): the vehicle's first TCP packet.
        var scheduleStart: UInt64 = .max
        var relayed: (up: Int, down: Int) = (0, 0)
        var dropped: (up: Int, down: Int) = (0, 0)
    }

    private static let counter = Atomic<Int>(0)

    /// Makes the namespaces, their devices and the relay. Throws with what failed (not root, no TUN).
    public init(profile: Profile, seed: UInt64 = 1) throws {
        self.profile = profile
        let n = Self.counter.add(1, ordering: .relaxed).newValue
        let tag = "\(getpid())-\(n)"
        vehicle = "gfa-vehicle-\(tag)"
        broker = "gfa-broker-\(tag)"
        // A point-to-point pair inside our own namespaces; nothing outside them is ever addressed.
        vehicleAddress = "10.77.0.1"
        brokerAddress = "10.77.0.2"
        let namespaces = [vehicle, broker]
        guard let undo = UndoOnSignal.register({ Self.delete(namespaces) }) else {
            throw LinkError("no link made: this process is stopping on a signal")
        }
        self.undo = undo
        do {
            let sides = [(vehicle, vehicleAddress, brokerAddress), (broker, brokerAddress, vehicleAddress)]
            for (ns, address, peer) in sides {
                try Self.ip(["netns", "add", ns])
                try Self.ip(["netns", "exec", ns, "ip", "link", "set", "lo", "up"])
                try Self.ip(["netns", "exec", ns, "ip", "tuntap", "add", "dev", Self.device, "mode", "tun"])
                try Self.ip(["netns", "exec", ns, "ip", "addr", "add", address, "peer", peer, "dev", Self.device])
                try Self.ip(["netns", "exec", ns, "ip", "link", "set", Self.device, "up"])
            }
            fds = (try Self.attach(namespace: vehicle), try Self.attach(namespace: broker))
        } catch {
            Self.delete(namespaces)
            UndoOnSignal.forget(undo)
            throw error
        }
        var pipeFDs: [Int32] = [0, 0]
        _ = pipe(&pipeFDs)
        wake = (pipeFDs[0], pipeFDs[1])
        let thread = Thread { [self] in relay(seed: seed) }
        thread.name = "cellular-link"
        thread.start()
    }

    deinit { stop() }

    /// `arguments` run inside one side's namespace (`ip netns exec`): spawn it with `LocalProcess.spawn`.
    public func command(in namespace: String, _ arguments: [String]) -> (tool: String, arguments: [String]) {
        (Self.ipTool, ["netns", "exec", namespace] + arguments)
    }

    /// Cuts the link now for `seconds`, whatever the profile says.
    public func cut(for seconds: Double) {
        let until = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        state.withLock { $0.cutUntil = max($0.cutUntil, until) }
    }

    /// Packets relayed and dropped each way (up: vehicle to broker).
    public var packets: (relayed: (up: Int, down: Int), dropped: (up: Int, down: Int)) {
        state.withLock { ($0.relayed, $0.dropped) }
    }

    /// The vehicle's interface counters: IP bytes sent (up) and received (down).
    public func vehicleBytes() throws -> (up: Int, down: Int) {
        func read(_ name: String) throws -> Int {
            let output = try Self.ip([
                "netns", "exec", vehicle, "cat", "/sys/class/net/\(Self.device)/statistics/\(name)",
            ])
            return Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        return (try read("tx_bytes"), try read("rx_bytes"))
    }

    /// Stops the relay and deletes both namespaces (and their devices with them).
    public func stop() {
        let first = state.withLock { s -> Bool in
            defer { s.stopping = true }
            return !s.stopping
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        finished.wait()
        for fd in [fds.vehicle, fds.broker, wake.read, wake.write] { close(fd) }
        Self.delete([vehicle, broker])
        UndoOnSignal.forget(undo)
    }

    // MARK: The relay

    private struct Packet {
        var due: UInt64
        var bytes: [UInt8]
    }

    private func relay(seed: UInt64) {
        defer { finished.signal() }
        var random = SplitMix64(seed: seed)
        var queues: [[Packet]] = [[], []]  // 0: to the broker, 1: to the vehicle
        var lastLost = [false, false]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let outputs = [fds.broker, fds.vehicle]
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            // Send what is due, in due order (jitter reorders).
            for direction in 0..<2 {
                while let first = queues[direction].first, first.due <= now {
                    queues[direction].removeFirst()
                    _ = first.bytes.withUnsafeBytes { write(outputs[direction], $0.baseAddress, $0.count) }
                }
            }
            let nextDue = queues.compactMap { $0.first?.due }.min()
            let timeout = nextDue.map { Int32(clamping: ($0 > now ? $0 - now : 0) / 1_000_000 + 1) } ?? 1_000
            var polled = [
                pollfd(fd: fds.vehicle, events: Int16(POLLIN), revents: 0),
                pollfd(fd: fds.broker, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
            _ = poll(&polled, 3, timeout)
            if state.withLock({ $0.stopping }) { return }
            // A device in error (its namespace gone) would wake poll at once for ever: the relay ends.
            let failed = Int16(POLLERR | POLLHUP | POLLNVAL)
            if polled[0].revents & failed != 0 || polled[1].revents & failed != 0 { return }
            for direction in 0..<2 where polled[direction].revents & Int16(POLLIN) != 0 {
                let count = read(polled[direction].fd, &buffer, buffer.count)
                guard count > 0 else { continue }
                let at = DispatchTime.now().uptimeNanoseconds
                let tcp = count > 9 && buffer[0] >> 4 == 4 && buffer[9] == 6  // IPv4, protocol 6
                if lose(direction: direction, at: at, tcp: tcp, lastLost: &lastLost[direction], random: &random) {
                    state.withLock { if direction == 0 { $0.dropped.up += 1 } else { $0.dropped.down += 1 } }
                    continue
                }
                let delay = max(0, profile.delay + (Double.random(in: 0..<1, using: &random) * 2 - 1) * profile.jitter)
                let packet = Packet(due: at + UInt64(delay * 1e9), bytes: Array(buffer[0..<count]))
                let index = queues[direction].firstIndex { $0.due > packet.due } ?? queues[direction].endIndex
                queues[direction].insert(packet, at: index)
                state.withLock { if direction == 0 { $0.relayed.up += 1 } else { $0.relayed.down += 1 } }
            }
        }
    }

    /// Whether a packet arriving `at` is lost: in an outage (the profile's or a cut), or by chance. The
    /// vehicle's first TCP packet starts the outage schedule.
    private func lose(direction: Int, at: UInt64, tcp: Bool, lastLost: inout Bool, random: inout SplitMix64)
        -> Bool
    {
        let (cutUntil, start) = state.withLock { s in
            if direction == 0, tcp, s.scheduleStart == .max { s.scheduleStart = at }
            return (s.cutUntil, s.scheduleStart)
        }
        if at < cutUntil { return true }
        if let every = profile.outageEvery, every > 0, at >= start {
            let sinceFirst = Double(at - start) / 1e9 - (profile.firstOutage ?? every)
            if sinceFirst >= 0 && sinceFirst.truncatingRemainder(dividingBy: every) < profile.outageLength {
                return true
            }
        }
        let p =
            lastLost
            ? profile.loss + profile.lossCorrelation * (1 - profile.loss)
            : profile.loss * (1 - profile.lossCorrelation)
        lastLost = Double.random(in: 0..<1, using: &random) < p
        return lastLost
    }

    // MARK: Devices and commands

    /// iproute2's `ip`, wherever this system keeps it.
    public static let ipTool =
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") ? "/usr/sbin/ip" : "/sbin/ip"

    /// Deletes namespaces, and their devices with them; one that is not there is no error.
    static func delete(_ namespaces: [String]) {
        for ns in namespaces { _ = try? ip(["netns", "del", ns]) }
    }

    /// Runs `ip` and returns what it printed; throws with its error output when it fails.
    /// Spawned and reaped here (Foundation's `Process` was seen noticing an exit tens of seconds late on a
    /// loaded machine).
    @discardableResult
    static func ip(_ arguments: [String]) throws -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("gfa-ip-\(UUID().uuidString)").path
        defer { for suffix in [".out", ".err"] { unlink(base + suffix) } }
        let pid = try LocalProcess.spawnHelper(
            ipTool, arguments, standardOutput: base + ".out", standardError: base + ".err")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        guard status == 0 else {
            let errors = ((try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? "").trimmingCharacters(
                in: .whitespacesAndNewlines)
            throw LinkError("ip \(arguments.joined(separator: " ")) failed: \(errors)")
        }
        return output
    }

    /// Opens the namespace's TUN device from a thread that entered the namespace (setns is per thread);
    /// the descriptor stays attached to that device afterwards.
    static func attach(namespace: String) throws -> Int32 {
        let result = Mutex<Result<Int32, LinkError>>(.failure(LinkError("not attached")))
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            let nsfd = open("/var/run/netns/\(namespace)", O_RDONLY | O_CLOEXEC)
            guard nsfd >= 0, setNetworkNamespace(nsfd) == 0 else {
                result.withLock {
                    $0 = .failure(LinkError("cannot enter \(namespace): \(String(cString: strerror(errno)))"))
                }
                return
            }
            close(nsfd)
            let fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC)
            guard fd >= 0 else {
                result.withLock {
                    $0 = .failure(LinkError("cannot open /dev/net/tun: \(String(cString: strerror(errno)))"))
                }
                return
            }
            // struct ifreq: the name (16 bytes), then the flags.
            var request = [UInt8](repeating: 0, count: 40)
            for (i, byte) in device.utf8.enumerated() { request[i] = byte }
            let flags = UInt16(0x0001 | 0x1000)  // IFF_TUN | IFF_NO_PI
            request[16] = UInt8(flags & 0xFF)
            request[17] = UInt8(flags >> 8)
            let tunSetInterface = UInt(0x4004_54CA)  // TUNSETIFF
            let attached = request.withUnsafeMutableBytes { ioctl(fd, tunSetInterface, $0.baseAddress!) }
            guard attached == 0 else {
                close(fd)
                result.withLock {
                    $0 = .failure(LinkError("TUNSETIFF in \(namespace): \(String(cString: strerror(errno)))"))
                }
                return
            }
            result.withLock { $0 = .success(fd) }
        }
        thread.start()
        done.wait()
        return try result.withLock { $0 }.get()
    }
}

/// glibc's `setns` (declared only under _GNU_SOURCE, which Swift's Glibc module leaves out), entering a
/// network namespace (CLONE_NEWNET) on the calling thread.
private func setNetworkNamespace(_ fd: Int32) -> Int32 {
    typealias SetNS = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(nil, "setns") else { return -1 }
    return unsafeBitCast(symbol, to: SetNS.self)(fd, 0x4000_0000)
}

/// Why the link could not be made.
public struct LinkError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
