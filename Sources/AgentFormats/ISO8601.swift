import Foundation

/// ISO 8601 in UTC with milliseconds, as gpsd reports time: `2020-03-18T13:28:19.600Z`.
///
/// Rounded to the nearest millisecond. Foundation's format style truncates the binary fraction, so a
/// time gpsd reported as `19.600` (stored as 19.59999...) came out as `19.599`.
package func iso8601(_ date: Date) -> String {
    let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
    // Foundation's calendar is Julian before 1582; outside the Gregorian years 1583-9999 it decides.
    guard milliseconds.isFinite, milliseconds >= -12_212_553_600_000, milliseconds < 253_402_300_800_000 else {
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
    let total = Int64(milliseconds)
    let days = total >= 0 ? total / 86_400_000 : (total - 86_399_999) / 86_400_000
    let ofDay = total - days * 86_400_000
    let (year, month, day) = civilDate(daysSince1970: days)
    var text: [UInt8] = []
    text.reserveCapacity(24)
    func digits(_ value: Int64, _ width: Int) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            text.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
    digits(year, 4)
    text.append(UInt8(ascii: "-"))
    digits(month, 2)
    text.append(UInt8(ascii: "-"))
    digits(day, 2)
    text.append(UInt8(ascii: "T"))
    digits(ofDay / 3_600_000, 2)
    text.append(UInt8(ascii: ":"))
    digits(ofDay / 60_000 % 60, 2)
    text.append(UInt8(ascii: ":"))
    digits(ofDay / 1000 % 60, 2)
    text.append(UInt8(ascii: "."))
    digits(ofDay % 1000, 3)
    text.append(UInt8(ascii: "Z"))
    return String(decoding: text, as: UTF8.self)
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
private func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (era * 400 + yearOfEra + (month <= 2 ? 1 : 0), month, day)
}
