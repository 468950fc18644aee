/// A condition with the identifier and monitor it was defined for.
public struct ConditionDefinition: Sendable, Equatable {
    /// Unique within its monitor; safe as an MQTT topic level.
    public var identifier: String
    public var condition: Condition
    /// The monitor it belongs to (`properties.monitor`), or nil for the default monitor.
    public var monitor: String?

    public init(identifier: String, condition: Condition, monitor: String? = nil) {
        self.identifier = identifier
        self.condition = condition
        self.monitor = monitor
    }
}

/// Identifiers and monitor names end up as MQTT topic levels, so they must not hold wildcards or `/`.
public enum IdentifierRules {
    public static let maximumLength = 200

    /// Nil when `value` is a usable identifier, else why not.
    public static func problem(with value: String, what: String) -> String? {
        if value.isEmpty { return "\(what) is empty" }
        if value.utf8.count > maximumLength { return "\(what) is longer than \(maximumLength) bytes" }
        for (character, reason) in [
            ("/", "a topic level separator"), ("+", "an MQTT wildcard"), ("#", "an MQTT wildcard"),
        ]
        where value.contains(character) {
            return "\(what) '\(value)' contains '\(character)', \(reason)"
        }
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "\(what) contains a control character"
        }
        return nil
    }
}
