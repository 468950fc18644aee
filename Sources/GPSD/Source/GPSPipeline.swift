import Foundation
import GeofenceCore

/// What the source hands on.
enum GPSOutput: Sendable, Equatable {
    case location(Location)
    case status(GPSStatus)
}

/// The source's decisions, free of I/O: gpsd messages and clock ticks in, locations and status changes
/// out. It runs on the reader thread, so a report is a location without a hop through another queue.
struct GPSPipeline {
    private var coalescer: EpochCoalescer
    private var assembler: LocationAssembler
    private let noDataTimeout: UInt64
    private var lastMessageAt: UInt64 = 0
    private var connected = false
    private(set) var status = GPSStatus(state: .connecting)
    /// The device of the last fix told in the status (compared by name: no path looked up a fix).
    private var statusFixDevice: DeviceName?

    init(configuration: GPSSourceConfiguration) {
        coalescer = EpochCoalescer(
            quietPeriod: configuration.epochQuietPeriod, closesEarly: configuration.epochEarlyClose)
        assembler = LocationAssembler(settings: configuration.assembly)
        noDataTimeout = UInt64(configuration.noDataTimeout * 1e9)
    }

    /// When `tick` next has something to do; nil: nothing until the next message.
    var nextDeadline: UInt64? {
        var deadline = coalescer.nextDeadline
        if connected, status.state != .noData { deadline = min(deadline ?? .max, lastMessageAt + noDataTimeout) }
        return deadline
    }

    mutating func connected(now: UInt64) -> [GPSOutput] {
        connected = true
        lastMessageAt = now
        return []
    }

    mutating func connectFailed(_ error: GPSError) -> [GPSOutput] {
        connected = false
        return setStatus(.gpsdUnavailable, detail: error.description)
    }

    mutating func disconnected(_ error: GPSError) -> [GPSOutput] {
        connected = false
        var out = coalescer.closeAll().flatMap { assemble($0) }
        out += setStatus(.gpsdUnavailable, detail: error.description)
        return out
    }

    mutating func handle(_ message: GPSMessage, now: UInt64) -> [GPSOutput] {
        lastMessageAt = now
        switch message {
        case .fix(let report):
            let closed = coalescer.add(report)
            if closed.isEmpty {
                // The first report after silence already says whether there is a fix at all.
                return status.state == .noData ? setStatus(report.hasPosition ? .fix : .noFix) : []
            }
            return closed.flatMap { assemble($0) }
        case .noise(let noise):
            // The assembler holds the GST before the coalescer may close its epoch on it.
            assembler.note(noise: noise)
            return coalescer.add(noise: noise, receivedAtNanoseconds: now).flatMap { assemble($0) }
        case .sky(let device, let used):
            assembler.note(satellitesUsed: used, device: device)
        case .device(let path, let active):
            if active {
                if status.state == .noDevice || status.state == .deviceRemoved || status.state == .noData {
                    return setStatus(.noFix, detail: "receiver \(path) active, no fix yet", device: path)
                }
                return []
            }
            var out = coalescer.close(device: path).map { assemble($0) } ?? []
            let followed = assembler.followedDevice
            assembler.removed(device: path)
            if followed == nil || followed == path {
                out += setStatus(.deviceRemoved, detail: "receiver \(path) went away", device: path)
            }
            return out
        case .devices(let count):
            if count == 0 { return setStatus(.noDevice, detail: "gpsd has no receiver") }
        case .error(let text):
            return setStatus(status.state, detail: "gpsd: \(text)")
        case .version, .other:
            break
        }
        return []
    }

    mutating func tick(now: UInt64) -> [GPSOutput] {
        var out = coalescer.closeQuiet(now: now).flatMap { assemble($0) }
        if connected, now >= lastMessageAt + noDataTimeout, status.state != .noData, status.state != .noDevice {
            out += setStatus(.noData, detail: "nothing from gpsd for \(Double(noDataTimeout) / 1e9) s")
        }
        return out
    }

    mutating func stopped() -> [GPSOutput] {
        let out = coalescer.closeAll().flatMap { assemble($0) }
        return out + setStatus(.stopped)
    }

    private mutating func assemble(_ report: ReceiverReport) -> [GPSOutput] {
        switch assembler.assemble(report, wallClock: Date()) {
        case .location(let location)?:
            var out = [GPSOutput.location(location)]
            status.lastFixAtNanoseconds = location.receivedAtNanoseconds
            status.lastHorizontalAccuracy = location.horizontalAccuracy
            if status.state != .fix || statusFixDevice != location.deviceName {
                statusFixDevice = location.deviceName
                out += setStatus(.fix, detail: nil, device: location.device)
            }
            return out
        case .noFix(let device)?:
            return status.state == .noFix
                ? [] : setStatus(.noFix, detail: "the receiver reports no fix", device: device)
        case nil:
            return []
        }
    }

    private mutating func setStatus(_ state: GPSStatus.State, detail: String? = nil, device: String? = nil)
        -> [GPSOutput]
    {
        let next = GPSStatus(
            state: state, detail: detail, device: device ?? status.device,
            lastFixAtNanoseconds: status.lastFixAtNanoseconds,
            lastHorizontalAccuracy: status.lastHorizontalAccuracy)
        guard next != status else { return [] }
        status = next
        return [.status(next)]
    }
}
