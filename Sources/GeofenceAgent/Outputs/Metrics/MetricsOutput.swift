/// Prometheus (docs/integrations.md#prometheus): counts fixes, rejections, published events and commit
/// latencies. It sends nothing over MQTT; the metrics are scraped or written to a textfile.
struct MetricsOutput: AgentOutput {
    let metrics: AgentMetrics

    static func make(_ context: OutputContext) -> MetricsOutput? {
        context.metrics.map(MetricsOutput.init)
    }

    func messages(for happening: Happening) -> [OutputMessage] {
        switch happening {
        case .fix(let rejected): metrics.fix(rejected: rejected)
        case .event(let e) where e.origin == .fix: metrics.published(e.event.kind)
        case .committed(let latency): metrics.commitLatency.record(latency)
        default: break
        }
        return []
    }
}
