/// Caps on what one GeoJSON payload may hold, so that a mistaken or hostile upload cannot exhaust the
/// vehicle. The defaults admit real geofences: country borders and long routes run to tens of
/// thousands of vertices.
public struct GeoJSONLimits: Sendable, Equatable {
    /// Largest payload in bytes.
    public var maximumPayloadBytes: Int
    /// Most positions in one condition.
    public var maximumVerticesPerCondition: Int
    /// Most features in one collection.
    public var maximumFeatures: Int

    public init(
        maximumPayloadBytes: Int = 64 << 20, maximumVerticesPerCondition: Int = 100_000, maximumFeatures: Int = 200_000
    ) {
        self.maximumPayloadBytes = maximumPayloadBytes
        self.maximumVerticesPerCondition = maximumVerticesPerCondition
        self.maximumFeatures = maximumFeatures
    }

    public static let `default` = GeoJSONLimits()
}
