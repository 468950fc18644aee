/// The agent's version, published in its status and printed by `--version`.
public enum AgentVersion {
    public static let string = "0.1.0"
}
