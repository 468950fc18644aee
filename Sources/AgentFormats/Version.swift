/// The agent's version, published in its status and printed by `--version`.
package enum AgentVersion {
    package static let string = "0.1.0"
}
