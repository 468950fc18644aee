import Foundation
import GeofenceCore

/// gpsd 3.22's expected output for a log, reduced by the documented rules, written out independently of
/// the source's code: TPVs grouped per run of equal time (a run without time is one group; GST and SKY
/// lines do not break a run), the last TPV of each group standing for it, groups without a 2D/3D
/// position dropped, a group repeating the previous emitted time dropped. Early close: when the last
/// three groups each had N TPVs, a group with a time ends at its N-th TPV (with the GSTs seen by then);
/// its later TPVs are dropped, and the group's full count goes into the history.
package struct ExpectedLocation {
    package var tpv: [String: Any]
    package var gst: [String: Any]?

    package var time: String? { tpv["time"] as? String }
    package func double(_ key: String) -> Double? { (tpv[key] as? NSNumber)?.doubleValue }
    package var mode: Int { (tpv["mode"] as? NSNumber)?.intValue ?? 0 }
}

package enum ChkOracle {
    package static func expected(chk: URL) throws -> [ExpectedLocation] {
        let text = try String(contentsOf: chk, encoding: .utf8)
        // A GST describes its epoch whether it comes before, among or just after the epoch's TPVs: every
        // GST seen by the time the next epoch starts counts.
        var groups: [[String: Any]] = []
        var gstForGroup: [[String: Any]?] = []
        var currentTime: String?? = .none
        var gsts: [String: [String: Any]] = [:]
        var count = 0
        var history: [Int] = []
        var closedEarly = false
        func closeGroup() {
            guard let last = groups.last else { return }
            gstForGroup[groups.count - 1] = (last["time"] as? String).flatMap { gsts[$0] }
        }
        func closeEarlyIfLearned(time: String?) {
            guard time != nil, history.count == 3, Set(history).count == 1, count == history[0] else { return }
            closeGroup()
            closedEarly = true
        }
        for line in text.components(separatedBy: .newlines) where line.hasPrefix("{") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let kind = object["class"] as? String
            else { continue }
            if kind == "GST" {
                if let t = object["time"] as? String { gsts[t] = object }
                continue
            }
            guard kind == "TPV" else { continue }
            let time = object["time"] as? String
            if case .some(let t) = currentTime, t == time {
                count += 1
                if closedEarly { continue }
                groups[groups.count - 1] = object
            } else {
                if case .some = currentTime {
                    if !closedEarly { closeGroup() }
                    history = Array((history + [count]).suffix(3))
                }
                groups.append(object)
                gstForGroup.append(nil)
                currentTime = .some(time)
                count = 1
                closedEarly = false
            }
            closeEarlyIfLearned(time: time)
        }
        if !closedEarly { closeGroup() }
        var out: [ExpectedLocation] = []
        var lastTime: String?
        var anchored = false
        for (g, gst) in zip(groups, gstForGroup) {
            let e = ExpectedLocation(tpv: g, gst: gst)
            if let t = e.time, t == lastTime { continue }
            if e.time != nil { lastTime = e.time }
            guard e.mode >= 2, e.double("lat") != nil, e.double("lon") != nil else { continue }
            // A fix without GPS time before the first one is held back (FixClock: GPS time is the truth);
            // every bundled log gives GPS time within its first few epochs.
            if e.time == nil && !anchored { continue }
            anchored = anchored || e.time != nil
            out.append(e)
        }
        return out
    }

    /// The 1-sigma horizontal accuracy the note prescribes.
    package static func horizontalAccuracy(_ e: ExpectedLocation) -> Double {
        if let g = e.gst, let la = (g["lat"] as? NSNumber)?.doubleValue, let lo = (g["lon"] as? NSNumber)?.doubleValue {
            return (la * la + lo * lo).squareRoot()
        }
        if let x = e.double("epx"), let y = e.double("epy") { return (x * x + y * y).squareRoot() / 2.4477 }
        if let h = e.double("eph") { return 0.58 * h }
        return -1
    }

    package static func date(_ iso: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: iso)
    }
}
