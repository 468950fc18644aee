import Prometheus

/// The registry's collectors by their whole name: the agent's names (docs/integrations.md) are fixed strings,
/// not put together from a namespace and a unit as `MetricNameDescriptor` would have them.
extension PrometheusCollectorRegistry {
    func counter(name: String, labels: [(String, String)] = [], help: String) -> Counter {
        makeCounter(descriptor: Self.descriptor(name, help: help), labels: labels)
    }

    func gauge(name: String, labels: [(String, String)] = [], help: String) -> Gauge {
        makeGauge(descriptor: Self.descriptor(name, help: help), labels: labels)
    }

    func durationHistogram(name: String, buckets: [Duration], help: String) -> DurationHistogram {
        makeDurationHistogram(descriptor: Self.descriptor(name, help: help), buckets: buckets)
    }

    /// An empty unit adds nothing to the name: the descriptor's name is `name` as given.
    private static func descriptor(_ name: String, help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }
}
