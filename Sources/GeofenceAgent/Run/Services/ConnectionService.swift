import AgentOutputs
import Logging
import Mosquitto
import ServiceLifecycle
import ThreadExecution

/// What each connection to the broker brings: the status and the state at once, the outputs'
/// announcements (Home Assistant's discovery), and the connection counted. Announcements also go when
/// an output's request topic asks for them (Home Assistant's `online`).
final class ConnectionService: Service, Sendable {
    let client: any AgentTransport
    let reporter: StateReporter
    let outputs: MultiplexOutput
    let announcementRequests: [(subscription: MQTTSubscription, payload: String)]
    let logger: Logger

    init(
        client: any AgentTransport, reporter: StateReporter, outputs: MultiplexOutput,
        announcementRequests: [(subscription: MQTTSubscription, payload: String)], logger: Logger
    ) {
        self.client = client
        self.reporter = reporter
        self.outputs = outputs
        self.announcementRequests = announcementRequests
        self.logger = logger
    }

    func run() async {
        let brokerStates = client.statusUpdates
        let connectedAtStart = client.status.isConnected
        // Connected already: the stream only tells of later changes.
        if connectedAtStart {
            outputs.tell(.connection(connected: true))
            await announce()
        }
        await runUntilGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for request in self.announcementRequests {
                    group.addTask {
                        for await m in request.subscription
                        where String(decoding: m.payload, as: UTF8.self) == request.payload {
                            await self.announce()
                        }
                    }
                }
                group.addTask {
                    var connected = connectedAtStart
                    for await state in brokerStates {
                        if state.isConnected != connected {
                            connected = state.isConnected
                            self.outputs.tell(.connection(connected: connected))
                        }
                        guard state.isConnected else { continue }
                        await self.reporter.publishStatus(force: true)
                        await self.reporter.publishStateIfChanged(force: true)
                        await self.announce()
                    }
                }
            }
        }
    }

    /// The outputs' announcements, sent now and never queued.
    private func announce() async {
        for message in outputs.announcements() {
            do {
                try await client.publish(message.topic, payload: message.unstampedBytes, retain: message.retain)
            } catch {
                logger.warning(
                    "could not publish an announcement", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
                return
            }
        }
    }
}
