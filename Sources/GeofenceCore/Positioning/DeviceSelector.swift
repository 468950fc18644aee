import Foundation

/// Several receivers feed one gpsd and overwrite one another's reports. The agent follows one device:
/// the configured path, or else the best active one, kept while it delivers fixes so that two good
/// receivers never make the position hop between them.
public struct DeviceSelector: Sendable {
    public let configuredPath: String?
    /// A device without a fix for this long (seconds, monotonic) gives way to another with one.
    public var staleAfter: Double
    public private(set) var current: String?
    private var lastFix: [String: (received: UInt64, mode: Int, accuracy: Double)] = [:]
    /// The latest receive time seen: epochs of different devices close out of order, so staleness is
    /// judged against this, not against the report at hand.
    private var now: UInt64 = 0

    public init(configuredPath: String? = nil, staleAfter: Double = 3) {
        self.configuredPath = configuredPath
        self.staleAfter = staleAfter
        current = configuredPath
    }

    /// Whether a location from this device should be used; records it either way.
    public mutating func accept(device: String?, mode: Int, accuracy: Double, received: UInt64) -> Bool {
        let path = device ?? ""
        if let configuredPath { return path == configuredPath }
        now = max(now, received)
        if mode >= 2 {
            lastFix[path] = (max(lastFix[path]?.received ?? 0, received), mode, accuracy < 0 ? .infinity : accuracy)
        }
        if let current, current == path { return true }
        let staleNs = UInt64(staleAfter * 1e9)
        if let current, let fix = lastFix[current], now - min(fix.received, now) < staleNs {
            return false
        }
        // The current device is stale or unknown: take the best device with a recent fix.
        let candidates = lastFix.filter { now - min($0.value.received, now) < staleNs }
        let best = candidates.max { a, b in
            a.value.mode != b.value.mode ? a.value.mode < b.value.mode : a.value.accuracy > b.value.accuracy
        }
        guard let best, best.key == path else { return false }
        current = path
        return true
    }

    /// Whether reports from this device speak for the vehicle now (for no-fix reports, which never
    /// make a device the followed one).
    public func isFollowing(_ device: String?) -> Bool {
        if let configuredPath { return device == configuredPath }
        return current == nil || current == (device ?? "")
    }

    /// A device went away.
    public mutating func remove(device: String) {
        lastFix[device] = nil
        if configuredPath == nil, current == device { current = nil }
    }
}
