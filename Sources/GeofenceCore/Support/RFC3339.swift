import Foundation

/// RFC 3339 date-times (`2026-11-23T18:00:00Z`, `2026-11-23T19:00:00.5+01:00`), parsed by hand: no
/// locale, no calendar object, the same answer on every platform.
public enum RFC3339 {
    /// The instant `text` names, or nil when it is not an RFC 3339 date-time with a time zone offset.
    public static func date(from text: String) -> Date? {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var v = 0
            for i in at..<(at + count) {
                guard b[i] >= UInt8(ascii: "0"), b[i] <= UInt8(ascii: "9") else { return nil }
                v = v * 10 + Int(b[i] - UInt8(ascii: "0"))
            }
            return v
        }
        func byte(_ at: Int) -> UInt8? { at < b.count ? b[at] : nil }
        guard let year = digits(0, 4), byte(4) == UInt8(ascii: "-"), let month = digits(5, 2),
            byte(7) == UInt8(ascii: "-"),
            let day = digits(8, 2), let t = byte(10),
            t == UInt8(ascii: "T") || t == UInt8(ascii: "t") || t == UInt8(ascii: " "),
            let hour = digits(11, 2), byte(13) == UInt8(ascii: ":"), let minute = digits(14, 2),
            byte(16) == UInt8(ascii: ":"),
            let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60,
            second <= 60
        else { return nil }
        var at = 19
        var fraction = 0.0
        if byte(at) == UInt8(ascii: ".") {
            at += 1
            var scale = 0.1
            let start = at
            while let c = byte(at), c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") {
                fraction += Double(c - UInt8(ascii: "0")) * scale
                scale /= 10
                at += 1
            }
            guard at > start else { return nil }
        }
        var offset = 0
        switch byte(at) {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            at += 1
        case let sign? where sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"):
            guard let h = digits(at + 1, 2), byte(at + 3) == UInt8(ascii: ":"), let m = digits(at + 4, 2), h < 24,
                m < 60
            else { return nil }
            offset = (h * 60 + m) * 60 * (sign == UInt8(ascii: "+") ? 1 : -1)
            at += 6
        default:
            return nil
        }
        guard at == b.count else { return nil }
        let days = daysSince1970(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
