import AgentFormats
import GeofenceCore

/// An output's own object in config.json (`owntracks`, `homeAssistant`, `metrics`): it reads and writes
/// its keys, and the configuration keeps it by type. Adding an output with settings touches no other file.
public protocol OutputSettings: Sendable, Equatable {
    /// The output's key at the top of config.json.
    static var key: String { get }
    /// The defaults, when config.json leaves the key out.
    init()
    /// Reads the output's object; a key it does not know or a wrong value is refused with its path.
    init(parsing object: inout ConfigObject) throws(ConfigError)
    /// Every key, defaults included, in the form `init(parsing:)` reads.
    var json: JSONValue { get }
    /// Makes relative file paths relative to config.json's directory.
    mutating func resolvePaths(_ resolve: (String) -> String)
}

extension OutputSettings {
    public mutating func resolvePaths(_ resolve: (String) -> String) {}

    /// Whether two stored values (nil: the defaults) are the same settings.
    fileprivate static func same(_ a: (any OutputSettings)?, _ b: (any OutputSettings)?) -> Bool {
        (a as? Self ?? Self()) == (b as? Self ?? Self())
    }
}

/// The settings of every registered output, by type.
public struct OutputSettingsSet: Sendable, Equatable {
    private var values: [String: any OutputSettings] = [:]

    public init() {}

    /// An output's settings; its defaults when config.json has none.
    public subscript<S: OutputSettings>(_ type: S.Type) -> S {
        get { values[S.key] as? S ?? S() }
        set { values[S.key] = newValue }
    }

    /// Equal when every output's settings are, a missing object counting as its defaults.
    public static func == (a: Self, b: Self) -> Bool {
        Set(a.values.keys).union(b.values.keys).allSatisfy { key in
            let mine = a.values[key]
            let theirs = b.values[key]
            guard let type = (mine ?? theirs).map({ type(of: $0) }) else { return true }
            return type.same(mine, theirs)
        }
    }

    /// Reads every registered output's object from the top of config.json.
    package static func parse(_ top: inout ConfigObject) throws(ConfigError) -> OutputSettingsSet {
        var set = OutputSettingsSet()
        for type in OutputRegistry.settings {
            set.values[type.key] = try type.parse(&top)
        }
        return set
    }

    /// Every registered output's object, as config.json has it.
    package var json: [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: OutputRegistry.settings.map { type in (type.key, type.json(in: self)) })
    }

    package mutating func resolvePaths(_ resolve: (String) -> String) {
        for key in values.keys { values[key]!.resolvePaths(resolve) }
    }
}

extension OutputSettings {
    fileprivate static func parse(_ top: inout ConfigObject) throws(ConfigError) -> Self {
        guard var object = try top.object(key) else { return Self() }
        return try Self(parsing: &object)
    }

    fileprivate static func json(in set: OutputSettingsSet) -> JSONValue { set[Self.self].json }
}
