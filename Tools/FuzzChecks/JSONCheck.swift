import Foundation
import GeofenceCore

/// The JSON parser against Foundation's `JSONSerialization`: where both accept a document they must read
/// the same values, and where one refuses what the other accepts, the reason must be one this parser
/// documents. What it accepts, printed compactly, must read back the same.
enum JSONCheck {
    static func problems(_ input: [UInt8]) -> [String] {
        var ours: JSONValue?
        var ourError: JSONSyntaxError?
        do { ours = try JSONParser.parse(input) } catch { ourError = error }
        let theirs = try? JSONSerialization.jsonObject(with: Data(input), options: [.fragmentsAllowed])
        var problems: [String] = []
        switch (ours, theirs) {
        case (let ours?, let theirs?):
            if let difference = difference(ours, theirs, at: "$") {
                problems.append("read differently from Foundation: \(difference)")
            }
        case (let ours?, nil):
            problems.append("accepted what Foundation refuses: \(ours.jsonText.prefix(200))")
        case (nil, let theirs?):
            // The parser's two limits, which RFC 8259 allows: nesting, and numbers beyond a Double (Foundation
            // reads past one when a later duplicate key drops it).
            if let ourError, !ourError.message.hasPrefix("nesting deeper"),
                !ourError.message.hasSuffix("is out of range"),
                !onlyTrailingCommasDiffer(input, theirs), !isNotUTF8JSONText(input)
            {
                problems.append("refused what Foundation accepts: \(ourError)")
            }
        case (nil, nil):
            break
        }
        if let ours {
            let text = Array(ours.jsonText.utf8)
            switch Result(catching: { () throws(JSONSyntaxError) in try JSONParser.parse(text) }) {
            case .success(let again) where again != ours:
                problems.append("printed and read again, differs: \(ours) against \(again)")
            case .failure(let error):
                problems.append("printed, is refused: \(error): \(String(decoding: text.prefix(200), as: UTF8.self))")
            default: break
            }
        }
        return problems
    }

    /// Whether the input is not UTF-8 JSON text as RFC 8259 requires, though Foundation reads it: a raw NUL
    /// byte (Foundation takes NULs among the first four bytes for UTF-16 or UTF-32, and stops at a later
    /// one), or a byte order mark, which the RFC lets a parser refuse.
    static func isNotUTF8JSONText(_ input: [UInt8]) -> Bool {
        input.contains(0) || input.starts(with: [0xEF, 0xBB, 0xBF])
    }

    /// Whether Foundation accepted the input only because it allows a comma before `]` or `}`, which RFC
    /// 8259 does not: without those commas this parser reads what Foundation read.
    static func onlyTrailingCommasDiffer(_ input: [UInt8], _ theirs: Any) -> Bool {
        var stripped: [UInt8] = []
        var inString = false
        var escaped = false
        var removed = false
        for (i, b) in input.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if b == UInt8(ascii: "\\") {
                    escaped = true
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if b == UInt8(ascii: "\"") {
                inString = true
            } else if b == UInt8(ascii: ",") {
                let next = input[(i + 1)...].first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
                if next == UInt8(ascii: "]") || next == UInt8(ascii: "}") {
                    removed = true
                    continue
                }
            }
            stripped.append(b)
        }
        guard removed, let ours = try? JSONParser.parse(stripped) else { return false }
        return difference(ours, theirs, at: "$") == nil
    }

    /// Where two readings differ, as a path, or nil when they agree.
    static func difference(_ ours: JSONValue, _ theirs: Any, at path: String) -> String? {
        switch ours {
        case .null:
            return theirs is NSNull ? nil : "\(path): null against \(theirs)"
        case .bool(let b):
            guard let n = theirs as? NSNumber, n.boolValue == b, isBoolean(n) else {
                return "\(path): \(b) against \(theirs)"
            }
            return nil
        case .number(let d):
            guard let n = theirs as? NSNumber, !isBoolean(n) else { return "\(path): \(d) against \(theirs)" }
            let e = n.doubleValue
            // Foundation does not round long mantissas correctly (it read 122341567123456781e-71 8 ulp
            // off, where this parser and Python agree to the bit): numbers within 1e-13 are the same.
            return d == e || abs(d - e) <= 1e-13 * max(abs(d), abs(e)) ? nil : "\(path): \(d) against \(e)"
        case .string(let s):
            guard let t = theirs as? String, Array(s.unicodeScalars) == Array(t.unicodeScalars) else {
                return "\(path): \(s.debugDescription) against \(theirs)"
            }
            return nil
        case .array(let values):
            guard let other = theirs as? [Any], other.count == values.count else {
                return "\(path): an array of \(values.count) against \(theirs)"
            }
            for (k, (a, b)) in zip(values, other).enumerated() {
                if let d = difference(a, b, at: "\(path)[\(k)]") { return d }
            }
            return nil
        case .object(let members):
            guard let other = theirs as? [String: Any], other.count == members.count else {
                return "\(path): an object of \(members.count) members against \(theirs)"
            }
            for (key, value) in members {
                guard let b = other[key] else { return "\(path): no member \(key.debugDescription) in Foundation's" }
                if let d = difference(value, b, at: "\(path).\(key)") { return d }
            }
            return nil
        }
    }

    /// Whether Foundation read the number from `true` or `false` (it gives those its boolean subclass).
    static func isBoolean(_ n: NSNumber) -> Bool {
        String(describing: type(of: n)) == "__NSCFBoolean"
    }
}
