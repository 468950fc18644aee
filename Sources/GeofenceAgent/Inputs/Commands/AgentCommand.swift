import Foundation
import GeofenceCore

/// One message on the vehicle's `cmd` topic, read without acting on it (docs/topics.md#commands): a bare
/// command name, or `{"command": NAME, "monitor": ...}`.
package enum AgentCommand: Sendable, Equatable {
    case reportLocation
    /// The `state` topic's detail, for one monitor or all.
    case reportState(monitor: String?)
    case setLiveUpdates(started: Bool)
    case resync

    /// The command names the agent knows.
    package static let names = ["reportLocation", "reportState", "startLiveUpdates", "stopLiveUpdates", "resync"]

    /// The command a payload asks for, or why it asks for none (a message for the `errors` topic).
    package static func parse(_ payload: [UInt8]) -> Result<AgentCommand, CommandRefusal> {
        var name = String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        var monitor: String?
        if let json = try? JSONParser.parse(payload) {
            guard case .string(let c)? = json["command"] else {
                return .failure(
                    CommandRefusal("a JSON command needs a string \"command\"; known: \(names.joined(separator: ", "))")
                )
            }
            name = c
            if case .string(let m)? = json["monitor"] { monitor = m }
        }
        switch name {
        case "reportLocation": return .success(.reportLocation)
        case "reportState": return .success(.reportState(monitor: monitor))
        case "startLiveUpdates": return .success(.setLiveUpdates(started: true))
        case "stopLiveUpdates": return .success(.setLiveUpdates(started: false))
        case "resync": return .success(.resync)
        default:
            return .failure(
                CommandRefusal("unknown command '\(name.clipped)'; known: \(names.joined(separator: ", "))"))
        }
    }
}

/// Why a `cmd` message was refused.
package struct CommandRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
    package var description: String { reason }
}
