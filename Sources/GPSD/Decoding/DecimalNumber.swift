import Foundation

/// JSON numbers to doubles, correctly rounded and independent of the C locale.
enum DecimalNumber {
    /// Parses `-?digits[.digits][(e|E)[+-]digits]`, the whole of `count` bytes; nil otherwise.
    ///
    /// gpsd's figures have at most 15 significant digits, so they take Clinger's fast path: the
    /// digits as an exact integer, scaled by one exact power of ten, which IEEE division or
    /// multiplication rounds once, correctly. Anything longer goes to `strtod`.
    static func parse(_ p: UnsafePointer<UInt8>, count: Int) -> Double? {
        var i = 0
        let negative = count > 0 && p[0] == UInt8(ascii: "-")
        if negative { i = 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var significant = 0
        var scale = 0
        var intDigits = 0
        while i < count, let d = digit(p[i]) {
            accumulate(d, &mantissa, &significant)
            if significant > 19 { scale += 1 }
            intDigits += 1
            i += 1
        }
        // JSON wants a digit before the point.
        guard intDigits > 0 else { return nil }
        digits = intDigits
        if i < count, p[i] == UInt8(ascii: ".") {
            i += 1
            var fractionDigits = 0
            while i < count, let d = digit(p[i]) {
                accumulate(d, &mantissa, &significant)
                if significant <= 19 { scale -= 1 }
                fractionDigits += 1
                i += 1
            }
            guard fractionDigits > 0 else { return nil }
            digits += fractionDigits
        }
        guard digits > 0 else { return nil }
        if i < count, p[i] == UInt8(ascii: "e") || p[i] == UInt8(ascii: "E") {
            i += 1
            var exponentNegative = false
            if i < count, p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-") {
                exponentNegative = p[i] == UInt8(ascii: "-")
                i += 1
            }
            var exponent = 0
            var exponentDigits = 0
            while i < count, let d = digit(p[i]) {
                if exponent < 100_000 { exponent = exponent * 10 + Int(d) }
                exponentDigits += 1
                i += 1
            }
            guard exponentDigits > 0 else { return nil }
            scale += exponentNegative ? -exponent : exponent
        }
        guard i == count else { return nil }
        if significant <= 15, abs(scale) <= 22 {
            let m = Double(mantissa)
            let v = scale < 0 ? m / power(-scale) : m * power(scale)
            return negative ? -v : v
        }
        return viaStrtod(p, count: count)
    }

    /// 10^k for k in 0...22, which a double holds exactly. A switch of literals, not a table: a static
    /// table costs a lazy-initialisation check on every read.
    private static func power(_ k: Int) -> Double {
        switch k {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        case 15: 1e15
        case 16: 1e16
        case 17: 1e17
        case 18: 1e18
        case 19: 1e19
        case 20: 1e20
        case 21: 1e21
        default: 1e22
        }
    }

    private static func digit(_ b: UInt8) -> UInt64? {
        b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") ? UInt64(b - UInt8(ascii: "0")) : nil
    }

    /// Leading zeros are not significant; digits past the 19th no longer fit and are dropped here
    /// (`strtod` then reads the whole text).
    private static func accumulate(_ d: UInt64, _ mantissa: inout UInt64, _ significant: inout Int) {
        if significant == 0, d == 0 { return }
        significant += 1
        if significant <= 19 { mantissa = mantissa * 10 + d }
    }

    private static func viaStrtod(_ p: UnsafePointer<UInt8>, count: Int) -> Double? {
        // strtod reads the C locale's decimal point; the agent never calls setlocale, so it is ".".
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: count + 1) { buffer in
            for j in 0..<count { buffer[j] = CChar(bitPattern: p[j]) }
            buffer[count] = 0
            return strtod(buffer.baseAddress!, nil)
        }
    }
}
