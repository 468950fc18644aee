import Foundation

/// NMEA 0183 sentences for a synthetic receiver, to feed a real gpsd.
public enum NMEA {
    /// GGA then RMC for one epoch, joined so they are written together, as a receiver sends an epoch.
    public static func epoch(latitude: Double, longitude: Double, time: Date, speedKnots: Double, course: Double)
        -> String
    {
        let (hms, date) = clock(time)
        let lat = coordinate(abs(latitude), degreesWidth: 2)
        let lon = coordinate(abs(longitude), degreesWidth: 3)
        let ns = latitude >= 0 ? "N" : "S"
        let ew = longitude >= 0 ? "E" : "W"
        let gga = sentence("GPGGA,\(hms),\(lat),\(ns),\(lon),\(ew),1,10,0.8,10.0,M,46.0,M,,")
        let rmc = sentence(
            "GPRMC,\(hms),A,\(lat),\(ns),\(lon),\(ew),\(String(format: "%.1f", speedKnots)),\(String(format: "%.1f", course)),\(date),,,A"
        )
        return gga + "\r\n" + rmc
    }

    /// GGA, RMC, then GST stating `sigma` metres of 1-sigma error in latitude and in longitude (GST after the
    /// position, as a u-blox sends it): the agent's accuracy then comes from GST, as for a real receiver.
    public static func epoch(
        latitude: Double, longitude: Double, time: Date, speedKnots: Double, course: Double, sigma: Double
    ) -> String {
        let s = String(format: "%.1f", sigma)
        let gst = sentence("GPGST,\(clock(time).hms),\(s),\(s),\(s),0.0,\(s),\(s),\(String(format: "%.1f", 2 * sigma))")
        return epoch(latitude: latitude, longitude: longitude, time: time, speedKnots: speedKnots, course: course)
            + "\r\n" + gst
    }

    /// The time of day (hhmmss.ss) and the date (ddmmyy), in UTC.
    static func clock(_ time: Date) -> (hms: String, date: String) {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let d = utc.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: time)
        let hms = String(format: "%02d%02d%05.2f", d.hour!, d.minute!, Double(d.second!) + Double(d.nanosecond!) / 1e9)
        return (hms, String(format: "%02d%02d%02d", d.day!, d.month!, d.year! % 100))
    }

    static func coordinate(_ value: Double, degreesWidth: Int) -> String {
        let degrees = Int(value)
        let minutes = (value - Double(degrees)) * 60
        return String(format: "%0\(degreesWidth)d%07.4f", degrees, minutes)
    }

    public static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0), ^)
        return "$" + body + String(format: "*%02X", checksum)
    }
}
