import AgentFormats
import Foundation
import GeofenceCore

extension Payloads {
    /// The largest `state` or `state/detail` message: a broker or a dashboard takes it in one piece.
    package static let maximumStateBytes = 64 * 1024

    /// The retained `state` summary (docs/topics.md): per monitor the counts, the satisfied conditions and
    /// the unknown ones, each list cut to fit `maximumStateBytes` with `truncated` saying so.
    package static func state(_ monitors: [MonitorSummary], vehicle: String, time: Date = Date()) -> [UInt8] {
        // The lists share the budget evenly between monitors; counts are always exact.
        let budget = (maximumStateBytes - 1024) / max(1, monitors.count)
        let objects = monitors.map { m -> String in
            var line = JSONLine()
            line.add("conditions", m.conditions)
            line.add("satisfied", m.satisfiedCount)
            line.add("unsatisfied", m.unsatisfiedCount)
            line.add("unknown", m.unknownCount)
            var used = 200
            let (inside, insideCut) = fit(
                m.satisfied, total: m.satisfiedCount, budget: budget / 2, used: &used, withSince: true)
            let (unknown, unknownCut) = fit(
                m.unknown, total: m.unknownCount, budget: budget - used, used: &used, withSince: false)
            line.addRaw("inside", inside)
            line.addRaw("unknownConditions", unknown)
            line.add("truncated", insideCut || unknownCut)
            return "\(JSONLine.quote(m.name)):\(line.text)"
        }
        var line = JSONLine()
        line.add("vehicle", vehicle)
        line.add("time", iso8601(time))
        line.add("conditions", monitors.reduce(0) { $0 + $1.conditions })
        line.addRaw("monitors", "{\(objects.joined(separator: ","))}")
        return Array(line.text.utf8)
    }

    /// A JSON object (identifier → since) or array of identifiers, as many as fit in `budget` bytes.
    private static func fit(
        _ entries: [MonitorSummary.Entry], total: Int, budget: Int, used: inout Int, withSince: Bool
    ) -> (String, Bool) {
        var parts: [String] = []
        var size = 2
        for e in entries {
            let part =
                withSince
                ? "\(JSONLine.quote(e.identifier)):\(e.since.map { JSONLine.quote(iso8601($0)) } ?? "null")"
                : JSONLine.quote(e.identifier)
            if size + part.utf8.count + 1 > budget { break }
            size += part.utf8.count + 1
            parts.append(part)
        }
        used += size
        let text = withSince ? "{\(parts.joined(separator: ","))}" : "[\(parts.joined(separator: ","))]"
        return (text, parts.count < total)
    }
}
