import GeofenceCore
import ServiceLifecycle

/// Several outputs as one, after swift-log's `MultiplexLogHandler`: each is told every happening, in
/// registration order, and their messages follow one another in that order.
package struct MultiplexOutput: Sendable {
    package let outputs: [any AgentOutput]
    /// Whether any output wants the conditions the vehicle is inside.
    package let needsInsideConditions: Bool

    package init(_ outputs: [any AgentOutput]) {
        self.outputs = outputs
        needsInsideConditions = outputs.contains { $0.needsInsideConditions }
    }

    package func messages(for happening: Happening) -> [OutputMessage] {
        outputs.flatMap { $0.messages(for: happening) }
    }

    /// Tells every output something that gives no messages (a count, a latency, a status).
    package func tell(_ happening: Happening) {
        for output in outputs { _ = output.messages(for: happening) }
    }

    /// What every output announces at a connection.
    package func announcements() -> [OutputMessage] {
        outputs.flatMap { $0.announcements() }
    }

    package var announcementRequests: [(topic: String, payload: String)] {
        outputs.compactMap(\.announcementRequest)
    }

    /// Every output's services.
    package func services() throws -> [any Service] {
        try outputs.flatMap { try $0.services() }
    }
}
