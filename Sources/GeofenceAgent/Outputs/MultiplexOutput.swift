import GeofenceCore

/// Several outputs as one, after swift-log's `MultiplexLogHandler`: each is told every happening, in
/// registration order, and their messages follow one another in that order.
public struct MultiplexOutput: Sendable {
    public let outputs: [any AgentOutput]
    /// Whether any output wants the conditions the vehicle is inside.
    public let needsInsideConditions: Bool

    public init(_ outputs: [any AgentOutput]) {
        self.outputs = outputs
        needsInsideConditions = outputs.contains { $0.needsInsideConditions }
    }

    public func messages(for happening: Happening) -> [OutputMessage] {
        outputs.flatMap { $0.messages(for: happening) }
    }

    /// What every output announces at a connection.
    public func announcements() -> [OutputMessage] {
        outputs.flatMap { $0.announcements() }
    }

    public var announcementRequests: [(topic: String, payload: String)] {
        outputs.compactMap(\.announcementRequest)
    }
}
