import Foundation
import GeofenceCore

/// A forward-only reader over one line of gpsd's JSON, without allocating: keys are compared in place,
/// numbers are converted from their digits, and values the agent does not use are stepped over.
/// Every method returns nil or false on malformed input and never reads past the line.
struct JSONCursor {
    private let base: UnsafePointer<UInt8>
    private let count: Int
    private var index = 0
    /// Objects and arrays open around the cursor. gpsd nests two deep; a line nested past
    /// `maximumDepth` is refused rather than followed down the stack.
    private var depth = 0
    static let maximumDepth = 32

    /// `line` must outlive the cursor.
    init(_ line: UnsafeRawBufferPointer) {
        count = line.count
        // An empty buffer may have no base address; with a count of 0 the pointer is never read.
        base = line.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!
    }

    /// True when only white space is left.
    mutating func atEnd() -> Bool {
        skipSpace()
        return index == count
    }

    /// Consumes `byte` after any white space.
    mutating func consume(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < count, base[index] == byte else { return false }
        index += 1
        return true
    }

    /// Reads an object's members: `body` gets each key and must read or skip its value. False when the
    /// object is malformed or `body` returns false.
    mutating func object(_ body: (inout JSONCursor, JSONKey) -> Bool) -> Bool {
        guard depth < Self.maximumDepth, consume(UInt8(ascii: "{")) else { return false }
        depth += 1
        defer { depth -= 1 }
        if consume(UInt8(ascii: "}")) { return true }
        repeat {
            guard let key = key(), consume(UInt8(ascii: ":")), body(&self, key) else { return false }
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "}"))
    }

    /// Reads an array's elements: `body` must read or skip each one. False when malformed.
    mutating func array(_ body: (inout JSONCursor) -> Bool) -> Bool {
        guard depth < Self.maximumDepth, consume(UInt8(ascii: "[")) else { return false }
        depth += 1
        defer { depth -= 1 }
        if consume(UInt8(ascii: "]")) { return true }
        repeat {
            guard body(&self) else { return false }
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "]"))
    }

    /// A number, or nil when the value is not one.
    mutating func number() -> Double? {
        skipSpace()
        let start = index
        while index < count, Self.isNumberByte(base[index]) { index += 1 }
        guard index > start else { return nil }
        guard let value = DecimalNumber.parse(base + start, count: index - start) else {
            index = start
            return nil
        }
        return value
    }

    /// A string with its escapes decoded, or nil when the value is not a string.
    mutating func string() -> String? {
        skipSpace()
        guard index < count, base[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        var escaped = false
        while end < count, base[end] != UInt8(ascii: "\"") {
            if base[end] == UInt8(ascii: "\\") {
                escaped = true
                end += 1
            }
            end += 1
        }
        guard end < count else { return nil }
        index = end + 1
        let raw = UnsafeBufferPointer(start: base + start, count: end - start)
        if !escaped { return String(decoding: raw, as: UTF8.self) }
        return Self.unescape(raw)
    }

    /// A string without escapes, as its bytes in the line; nil when the value is not such a string.
    mutating func stringBytes() -> UnsafeRawBufferPointer? {
        skipSpace()
        guard index < count, base[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        while end < count, base[end] != UInt8(ascii: "\"") {
            if base[end] == UInt8(ascii: "\\") { return nil }
            end += 1
        }
        guard end < count else { return nil }
        index = end + 1
        return UnsafeRawBufferPointer(start: base + start, count: end - start)
    }

    /// true or false, or nil when the value is neither.
    mutating func bool() -> Bool? {
        if literal("true") { return true }
        if literal("false") { return false }
        return nil
    }

    /// Steps over one value of any kind.
    mutating func skipValue() -> Bool {
        skipSpace()
        guard index < count else { return false }
        switch base[index] {
        case UInt8(ascii: "{"):
            return object { cursor, _ in cursor.skipValue() }
        case UInt8(ascii: "["):
            return array { $0.skipValue() }
        case UInt8(ascii: "\""):
            return skipString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return bool() != nil
        case UInt8(ascii: "n"):
            return literal("null")
        default:
            // Stepped over, not converted: most of a SKY's and a TPV's numbers are never read. A number
            // starts with a digit or a minus; anything else is no value.
            let first = base[index]
            guard first == UInt8(ascii: "-") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) else {
                return false
            }
            while index < count, Self.isNumberByte(base[index]) { index += 1 }
            return true
        }
    }

    private mutating func key() -> JSONKey? {
        skipSpace()
        guard index < count, base[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        while end < count, base[end] != UInt8(ascii: "\"") {
            // A key with an escape is none the agent reads: keep it whole, so that it matches nothing.
            if base[end] == UInt8(ascii: "\\") { end += 1 }
            end += 1
        }
        guard end < count else { return nil }
        index = end + 1
        return JSONKey(start: base + start, count: end - start)
    }

    private mutating func skipString() -> Bool {
        var end = index + 1
        while end < count, base[end] != UInt8(ascii: "\"") {
            if base[end] == UInt8(ascii: "\\") { end += 1 }
            end += 1
        }
        guard end < count else { return false }
        index = end + 1
        return true
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        skipSpace()
        let n = word.utf8CodeUnitCount
        guard count - index >= n, memcmp(base + index, word.utf8Start, n) == 0 else { return false }
        index += n
        return true
    }

    private mutating func skipSpace() {
        while index < count {
            switch base[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private static func isNumberByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "-") || b == UInt8(ascii: "+")
            || b == UInt8(ascii: ".") || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
    }

    /// JSON's escapes, read by the agent's JSON parser (rare in gpsd's reports: a device path or an error
    /// message with a quote); an invalid one makes the string unreadable (nil).
    private static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
        guard case .string(let s)? = try? JSONParser.parse([UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")]) else {
            return nil
        }
        return s
    }
}

/// A member's key, pointing into the line.
struct JSONKey {
    let start: UnsafePointer<UInt8>
    let count: Int

    /// The key's first 8 bytes as one integer, to compare with `JSONKey.code(_:)` in a switch.
    var code: UInt64 {
        guard count <= 8 else { return 0 }
        var v: UInt64 = 0
        for j in 0..<count { v |= UInt64(start[j]) << (8 * UInt64(j)) }
        return v
    }

    /// The code of a key of 8 bytes or fewer.
    static func code(_ key: StaticString) -> UInt64 {
        precondition(key.utf8CodeUnitCount <= 8)
        var v: UInt64 = 0
        for j in 0..<key.utf8CodeUnitCount { v |= UInt64(key.utf8Start[j]) << (8 * UInt64(j)) }
        return v
    }

    func `is`(_ key: StaticString) -> Bool {
        key.utf8CodeUnitCount == count && memcmp(start, key.utf8Start, count) == 0
    }
}
