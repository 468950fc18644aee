import Foundation

/// Live updates shaped like Core Location's `CLLocationUpdate.liveUpdates(_:)`, over any source of
/// locations (gpsd, a GPX replay).
///
/// ```swift
/// for await update in LocationUpdates.liveUpdates(.automotiveNavigation, from: source.locations) {
///     if update.isStationary { ... }
/// }
/// ```
public enum LocationUpdates {
    /// Locations filtered by a preset. The sequence ends when the source ends.
    public static func liveUpdates<Source: AsyncSequence & Sendable>(
        _ configuration: LiveConfiguration = .default, from source: Source
    ) -> AsyncStream<LiveUpdate> where Source.Element == Location {
        liveUpdates(policy: configuration.policy, from: source)
    }

    /// Locations filtered by an explicit policy, such as `LiveUpdatePolicy.significantChanges`.
    public static func liveUpdates<Source: AsyncSequence & Sendable>(
        policy: LiveUpdatePolicy, from source: Source
    ) -> AsyncStream<LiveUpdate> where Source.Element == Location {
        filtered(source, LiveUpdateFilter(policy: policy)) { $0.update($1) }
    }

    /// Courses that turned by at least `headingFilter` degrees.
    public static func headingUpdates<Source: AsyncSequence & Sendable>(
        headingFilter: Double = 1, from source: Source
    ) -> AsyncStream<Double> where Source.Element == Location {
        filtered(source, HeadingFilter(headingFilter: headingFilter)) { $0.update($1) }
    }

    /// Runs a pure filter over a source on its own task; the stream ends when the source does.
    private static func filtered<Source: AsyncSequence & Sendable, Filter: Sendable, Output: Sendable>(
        _ source: Source, _ initial: Filter, _ step: @escaping @Sendable (inout Filter, Location) -> Output?
    ) -> AsyncStream<Output> where Source.Element == Location {
        AsyncStream { continuation in
            let task = Task {
                var filter = initial
                do {
                    for try await location in source {
                        if let output = step(&filter, location) { continuation.yield(output) }
                    }
                } catch {}
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
