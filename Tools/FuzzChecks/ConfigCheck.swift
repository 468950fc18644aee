import GeofenceAgent
import GeofenceCore

/// `config.json`, edited by hand: refused with the file's name and the key's path, or accepted, and then
/// printed in full (`AgentConfiguration.json`) and read back to the same configuration.
enum ConfigCheck {
    static func problems(_ input: [UInt8]) -> [String] {
        let configuration: AgentConfiguration
        do {
            configuration = try AgentConfiguration.parse(input, name: "config.json")
        } catch {
            return refusalProblems(error.description, startsWith: "config.json: ")
        }
        let printed = configuration.json.jsonText
        do {
            let again = try AgentConfiguration.parse(Array(printed.utf8), name: "printed")
            return again == configuration ? [] : ["printed and read again, the configuration differs: \(printed)"]
        } catch {
            return ["the printed configuration is refused: \(error.description); printed: \(printed.prefix(400))"]
        }
    }
}
