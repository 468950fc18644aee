import GeofenceCore
import ServiceLifecycle

/// Several outputs as one, after swift-log's `MultiplexLogHandler`: each is told every happening, in
/// registration order, and their messages follow one another in that order.
package struct MultiplexOutput: Sendable {
    package let outputs: [any AgentOutput]
    /// Whether any output wants the conditions the vehicle is inside.
    package let needsInsideConditions: Bool
    /// Whether any output follows every round's status.
    package let observesStatus: Bool
    /// Whether any output counts fixes, commits and acknowledgements.
    package let observesCounts: Bool

    package init(_ outputs: [any AgentOutput]) {
        self.outputs = outputs
        needsInsideConditions = outputs.contains { $0.needsInsideConditions }
        observesStatus = outputs.contains { $0.observesStatus }
        observesCounts = outputs.contains { $0.observesCounts }
    }

    /// Asked for every fix: the outputs are reached by index, since iterating (or `flatMap`) copies each
    /// existential out of the array, with a retain and a release.
    package func messages(for happening: Happening) -> [OutputMessage] {
        var messages: [OutputMessage] = []
        for index in outputs.indices {
            let more = outputs[index].messages(for: happening)
            if messages.isEmpty { messages = more } else { messages += more }
        }
        return messages
    }

    /// Tells every output something that gives no messages (a count, a latency, a status).
    package func tell(_ happening: Happening) {
        for index in outputs.indices { _ = outputs[index].messages(for: happening) }
    }

    /// Tells the outputs that count (`observesCounts`) a fix offered, a commit or an acknowledgement; the
    /// happening is made only for them.
    package func count(_ happening: @autoclosure () -> Happening) {
        guard observesCounts else { return }
        tell(happening())
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
