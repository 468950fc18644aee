import Logging
import ServiceLifecycle
import ThreadExecution

/// Prometheus (docs/integrations.md#prometheus): counts fixes, rejections, published events, commit and
/// acknowledgement latencies, connections, and the present from each status. It sends nothing over MQTT:
/// its endpoint is scraped (`metrics.enabled`) or its textfile read by node_exporter (`metrics.textfile`).
struct MetricsOutput: AgentOutput {
    let metrics: AgentMetrics
    let settings: MetricsSettings
    let logger: Logger

    static var settingsType: (any OutputSettings.Type)? { MetricsSettings.self }

    static func make(_ context: OutputContext) -> MetricsOutput? {
        let settings = context.settings[MetricsSettings.self]
        guard settings.enabled || settings.textfile != nil else { return nil }
        return MetricsOutput(metrics: AgentMetrics(), settings: settings, logger: context.logger)
    }

    /// Its gauges follow each status: the fix's age, the outbox's rows.
    var observesStatus: Bool { true }
    var observesCounts: Bool { true }

    func messages(for happening: Happening) -> [OutputMessage] {
        switch happening {
        case .fix(let rejected): metrics.fix(rejected: rejected)
        case .event(let e): metrics.published(e.event.kind)
        case .trip(let t): metrics.trip(t.event)
        case .committed(let latency): metrics.commitLatency.record(latency)
        case .acknowledged(let latency): metrics.acknowledgementLatency.record(latency)
        case .connection(let connected): metrics.brokerConnection(connected)
        case .status(let status): metrics.observe(status)
        default: break
        }
        return []
    }

    /// The endpoint, and the textfile's timer. A taken port costs the endpoint, not the vehicle's
    /// geofencing: said loudly, and the agent runs on.
    func services() throws -> [any Service] {
        var services: [any Service] = []
        if settings.enabled {
            do {
                services.append(
                    try MetricsServer(host: settings.host, port: settings.port, logger: logger) { [metrics] in
                        metrics.text()
                    })
            } catch {
                logger.error("metrics are not served", metadata: ["reason": "\(error)"])
            }
        }
        if let path = settings.textfile {
            services.append(
                MetricsTextfileService(textfile: MetricsTextfile(path: path), metrics: metrics, logger: logger))
        }
        return services
    }
}

/// Writes node_exporter's textfile every 15 s until the agent stops, and once more at the stop with
/// `geofence_agent_running` and `geofence_agent_broker_connected` at 0: a stale file must not say
/// "connected" for a vehicle whose agent is gone.
struct MetricsTextfileService: Service {
    let textfile: MetricsTextfile
    let metrics: AgentMetrics
    let logger: Logger

    func run() async {
        await runUntilGracefulShutdown {
            while !Task.isCancelled {
                write()
                do { try await Task.sleep(for: .seconds(15), clock: .serialTimer) } catch { return }
            }
        }
        metrics.stopped()
        write()
    }

    private func write() {
        do { try textfile.write(metrics.text()) } catch {
            logger.warning("metrics textfile not written", metadata: ["path": "\(textfile.path)", "error": "\(error)"])
        }
    }
}
