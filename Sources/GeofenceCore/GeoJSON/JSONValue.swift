/// A parsed JSON document. Objects keep their last value for a repeated key, as most parsers do.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The JSON type's name, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
}

/// Why a document is not JSON, with the place (1-based line and column).
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var column: Int
    public var description: String { "invalid JSON at line \(line), column \(column): \(message)" }
}

extension JSONValue {
    /// Compact JSON text (object keys sorted, so equal values give equal text).
    public var jsonText: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n):
            if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
            return "\(n)"
        case .string(let s): return Self.quoted(s)
        case .array(let a): return "[" + a.map(\.jsonText).joined(separator: ",") + "]"
        case .object(let o):
            return "{" + o.keys.sorted().map { Self.quoted($0) + ":" + o[$0]!.jsonText }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal for `s`.
    public static func quoted(_ s: String) -> String {
        // Most strings need no escape: one pass over the bytes instead of appending scalar by scalar.
        if !s.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }) { return "\"" + s + "\"" }
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count)
                    + String(u.value, radix: 16)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
