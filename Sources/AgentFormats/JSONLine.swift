import Foundation
import GeofenceCore

/// One JSON object written with its keys in the order given, for line-oriented output that people
/// read and scripts parse.
package struct JSONLine {
    private var parts: [String] = []

    package init() {}

    package mutating func add(_ key: String, _ value: String?) {
        guard let value else { return }
        parts.append("\(Self.quote(key)):\(Self.quote(value))")
    }

    package mutating func add(_ key: String, _ value: Int) { parts.append("\(Self.quote(key)):\(value)") }

    package mutating func add(_ key: String, _ value: Double?) {
        guard let value, value.isFinite else { return }
        parts.append("\(Self.quote(key)):\(value)")
    }

    /// A key that is always present: null when the value is unknown (nil, or negative for Core Location's
    /// "unknown" convention when `negativeIsUnknown`).
    package mutating func add(_ key: String, orNull value: Double?, negativeIsUnknown: Bool = false) {
        if let value, value.isFinite, !(negativeIsUnknown && value < 0) {
            parts.append("\(Self.quote(key)):\(value)")
        } else {
            parts.append("\(Self.quote(key)):null")
        }
    }

    package mutating func add(_ key: String, orNull value: Int?) {
        parts.append("\(Self.quote(key)):\(value.map { "\($0)" } ?? "null")")
    }

    package mutating func add(_ key: String, orNull value: String?) {
        parts.append("\(Self.quote(key)):\(value.map(Self.quote) ?? "null")")
    }

    package mutating func add(_ key: String, _ value: Bool) { parts.append("\(Self.quote(key)):\(value)") }

    package mutating func add(_ key: String, strings: [String]) {
        parts.append("\(Self.quote(key)):[\(strings.map(Self.quote).joined(separator: ","))]")
    }

    /// Another line's members, after this one's.
    package mutating func append(_ other: JSONLine) { parts += other.parts }

    /// A value that is already JSON (a nested object).
    package mutating func addRaw(_ key: String, _ json: String) {
        parts.append("\(Self.quote(key)):\(json)")
    }

    package var text: String { "{" + parts.joined(separator: ",") + "}" }

    package static func quote(_ s: String) -> String { JSONValue.quoted(s) }
}
