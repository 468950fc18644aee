/// A failure that the CLI reports on stderr with a non-zero exit status.
public struct AgentError: Error, Sendable, CustomStringConvertible {
    /// 2 for input that could not be used at all; 1 when the job ran but some input was refused.
    public var exitCode: Int32
    public var message: String

    public init(_ message: String, exitCode: Int32 = 2) {
        self.message = message
        self.exitCode = exitCode
    }

    public var description: String { message }
}
