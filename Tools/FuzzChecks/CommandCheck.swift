import GeofenceAgent

/// A message on the `cmd` topic from anyone who may publish there: one of the known commands, or refused
/// with a reason short enough for the `errors` topic.
enum CommandCheck {
    static func problems(_ input: [UInt8]) -> [String] {
        switch AgentCommand.parse(input) {
        case .success(let command):
            // A known name must be somewhere in the payload: nothing else makes a command.
            let text = String(decoding: input, as: UTF8.self)
            let name =
                switch command {
                case .reportLocation: "reportLocation"
                case .reportState: "reportState"
                case .setLiveUpdates(let started): started ? "startLiveUpdates" : "stopLiveUpdates"
                case .resync: "resync"
                }
            return text.contains(name) ? [] : ["\(command) from a payload that does not name it"]
        case .failure(let refusal):
            var problems = refusalProblems(refusal.reason, startsWith: "", limit: 500)
            if refusal.reason.isEmpty { problems.append("a refusal without a reason") }
            return problems
        }
    }
}
