import GeofenceCore

/// A mistake in config.json: the key's path and what is wrong with it.
public struct ConfigError: Error, Sendable {
    public var path: String
    public var message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
}

/// Reads one object, refusing keys it does not know.
public struct ConfigObject {
    public let values: [String: JSONValue]
    public let path: String
    public private(set) var used: Set<String> = []

    public init(_ value: JSONValue, path: String) throws(ConfigError) {
        guard case .object(let o) = value else {
            throw ConfigError(
                path: path.isEmpty ? "(top level)" : path, message: "expected an object, found \(value.typeName)")
        }
        values = o
        self.path = path
    }

    public func key(_ k: String) -> String { path.isEmpty ? k.clipped : "\(path).\(k.clipped)" }

    public mutating func raw(_ k: String) -> JSONValue? {
        used.insert(k)
        if case .null? = values[k] { return nil }
        return values[k]
    }

    public mutating func string(_ k: String) throws(ConfigError) -> String? {
        guard let v = raw(k) else { return nil }
        guard case .string(let s) = v else {
            throw ConfigError(path: key(k), message: "expected a string, found \(v.typeName)")
        }
        return s
    }

    public mutating func number(_ k: String, in range: ClosedRange<Double>? = nil) throws(ConfigError) -> Double? {
        guard let v = raw(k) else { return nil }
        guard case .number(let n) = v else {
            throw ConfigError(path: key(k), message: "expected a number, found \(v.typeName)")
        }
        if let range, !range.contains(n) {
            throw ConfigError(path: key(k), message: "\(n) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }

    public mutating func integer(_ k: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let n = try number(k) else { return nil }
        guard n == n.rounded(), let i = Int(exactly: n), range.contains(i) else {
            throw ConfigError(
                path: key(k),
                message: "expected a whole number from \(range.lowerBound) to \(range.upperBound), found \(n)")
        }
        return i
    }

    public mutating func bool(_ k: String) throws(ConfigError) -> Bool? {
        guard let v = raw(k) else { return nil }
        guard case .bool(let b) = v else {
            throw ConfigError(path: key(k), message: "expected true or false, found \(v.typeName)")
        }
        return b
    }

    public mutating func object(_ k: String) throws(ConfigError) -> ConfigObject? {
        guard let v = raw(k) else { return nil }
        return try ConfigObject(v, path: key(k))
    }

    public func finish() throws(ConfigError) {
        if let unknown = values.keys.filter({ !used.contains($0) }).sorted().first {
            throw ConfigError(
                path: key(unknown), message: "unknown key (known here: \(used.sorted().joined(separator: ", ")))")
        }
    }
}
