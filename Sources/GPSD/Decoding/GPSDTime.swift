import Foundation

/// gpsd's times, `YYYY-MM-DDTHH:MM:SS[.fraction]Z` in UTC, read from their digits.
enum GPSDTime {
    /// The time, or nil when the text is not in that form or names no real date (years 1 to 9999).
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(UnsafeRawBufferPointer($0)) }
    }

    static func parse(_ t: UnsafeRawBufferPointer) -> Date? {
        guard t.count >= 20, t[4] == UInt8(ascii: "-"), t[7] == UInt8(ascii: "-"), t[10] == UInt8(ascii: "T"),
            t[13] == UInt8(ascii: ":"), t[16] == UInt8(ascii: ":"), t[t.count - 1] == UInt8(ascii: "Z"),
            let year = number(t, 0, 4), let month = number(t, 5, 2), let day = number(t, 8, 2),
            let hour = number(t, 11, 2), let minute = number(t, 14, 2), let second = number(t, 17, 2),
            year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24,
            minute < 60,
            second < 61
        else { return nil }
        var nanoseconds = 0
        if t.count > 20 {
            // A fraction: "." and 1 to 9 digits before the Z.
            let digits = t.count - 21
            guard t[19] == UInt8(ascii: "."), (1...9).contains(digits), let f = number(t, 20, digits) else {
                return nil
            }
            nanoseconds = f
            for _ in digits..<9 { nanoseconds *= 10 }
        } else {
            guard t[19] == UInt8(ascii: "Z") else { return nil }
        }
        let seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    private static func number(_ t: UnsafeRawBufferPointer, _ at: Int, _ length: Int) -> Int? {
        var v = 0
        for j in at..<at + length {
            let b = t[j]
            guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
            v = v * 10 + Int(b - UInt8(ascii: "0"))
        }
        return v
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    private static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
