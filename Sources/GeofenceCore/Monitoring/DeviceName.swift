import Synchronization

/// A receiver's device path, as a `Location` carries it: a number given to each path once a process, so
/// that a location holds no reference and copies as plain bytes. A fix is copied many times on its way
/// through the monitors, the trip detector and the outputs; with a `String` in it every copy and every
/// optional's end went through the runtime's value witnesses (about a fifth of a decision with cold caches).
///
/// Two names are equal when their paths are. A process names at most `capacity` paths (gpsd serves a few
/// devices, and a hot-plugged one comes back under a path it had); past that, every new path is named
/// `overflowPath`.
public struct DeviceName: Sendable, Hashable, Codable, CustomStringConvertible {
    private let number: UInt32

    /// How many paths a process can name.
    public static let capacity = 4_096
    /// The path of every name made past `capacity`.
    public static let overflowPath = "(more than 4096 devices)"

    /// The paths named so far, each at its number.
    struct Registry {
        let capacity: Int
        private(set) var paths: [String] = []
        private var numbers: [String: UInt32] = [:]

        init(capacity: Int) {
            self.capacity = capacity
        }

        /// The number of `path`, given now if it has none (the overflow path's when the registry is full).
        mutating func number(for path: String) -> UInt32 {
            if let known = numbers[path] { return known }
            let kept = paths.count < capacity ? path : DeviceName.overflowPath
            if let known = numbers[kept] { return known }
            let number = UInt32(paths.count)
            paths.append(kept)
            numbers[kept] = number
            return number
        }
    }
    private static let registry = Mutex(Registry(capacity: capacity))

    /// The name of `path`: the same number every time within a process.
    public init(_ path: String) {
        number = Self.registry.withLock { $0.number(for: path) }
    }

    /// The device's path, as gpsd names it.
    public var path: String {
        Self.registry.withLock { $0.paths[Int(number)] }
    }

    public var description: String { path }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(path)
    }
}
