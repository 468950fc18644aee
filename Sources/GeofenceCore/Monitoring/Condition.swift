/// The shape of a condition as an operator defined it.
public enum ConditionGeometry: Sendable, Equatable {
    /// Core Location's `CLCircularGeographicCondition`: a geodesic circle, radius in metres.
    case circle(center: Coordinate, radius: Double)
    /// A Polygon (one part) or MultiPolygon: parts, each an outer ring followed by holes.
    case polygon(parts: [[[Coordinate]]])
    /// Every point within `halfWidth` metres of the line.
    case corridor(line: [Coordinate], halfWidth: Double)
}

/// A geographic condition to monitor, with its geometry prepared for fast evaluation.
public struct Condition: Sendable {
    /// A human-readable name carried into events.
    public var name: String?
    /// Seconds the state must stay satisfied before a `dwell` event.
    public var dwell: Double?
    /// Orders updates pushed for the same identifier: an older version is ignored.
    public var version: Int64?
    /// Seconds the new side must hold before `enter` or `exit` is published (the monitor's
    /// `minimumDuration` when nil).
    public var minimumDuration: Double?
    /// Which events to publish and when the condition ends.
    public var rules: ConditionRules {
        get { boxedRules?.value ?? ConditionRules() }
        set { boxedRules = Self.box(newValue) }
    }
    /// Most conditions have no rules; boxed, they cost 8 bytes rather than 112 each.
    private var boxedRules: Boxed<ConditionRules>?
    /// Whether `rules` holds any, without copying them out.
    var hasRules: Bool { boxedRules != nil }
    /// The prepared geometry.
    public let region: Region

    /// A circle, as Core Location's `CLCircularGeographicCondition(center:radius:)`.
    public static func circle(center: Coordinate, radius: Double, name: String? = nil, dwell: Double? = nil)
        throws(ConditionError) -> Condition
    {
        try Condition(geometry: .circle(center: center, radius: radius), name: name, dwell: dwell)
    }

    /// Validates the geometry and prepares it. The error names the offending ring or value.
    public init(
        geometry: ConditionGeometry, name: String? = nil, dwell: Double? = nil, version: Int64? = nil,
        minimumDuration: Double? = nil, rules: ConditionRules = ConditionRules()
    ) throws(ConditionError) {
        self.name = name
        boxedRules = Self.box(rules)
        self.dwell = dwell
        self.version = version
        if let minimumDuration, !(minimumDuration.isFinite && minimumDuration >= 0) {
            throw ConditionError(
                path: "minimumDuration",
                message: "minimumDuration \(minimumDuration) must be a non-negative number of seconds")
        }
        self.minimumDuration = minimumDuration
        switch geometry {
        case .circle(let center, let radius):
            guard center.isValid else {
                throw ConditionError(path: "center", message: "coordinate \(center) is not a valid WGS84 position")
            }
            guard radius.isFinite, radius > 0 else {
                throw ConditionError(path: "radius", message: "radius \(radius) must be a positive number of metres")
            }
            guard radius <= ConditionLimits.maximumRadius else {
                throw ConditionError(path: "radius", message: "radius \(radius) m is larger than 20,000 km")
            }
            region = .circle(CircleRegion(center: center, radius: radius))
        case .polygon(let parts):
            guard !parts.isEmpty else {
                throw ConditionError(path: "coordinates", message: "a polygon needs at least one ring")
            }
            var prepared: [[[SIMD2<Double>]]] = []
            for (i, rings) in parts.enumerated() {
                guard !rings.isEmpty else {
                    throw ConditionError(path: "coordinates[\(i)]", message: "a polygon needs an outer ring")
                }
                var preparedRings: [[SIMD2<Double>]] = []
                for (j, ring) in rings.enumerated() {
                    switch validatedRing(ring) {
                    case .success(let points): preparedRings.append(points)
                    case .failure(let problem):
                        let place = "coordinates[\(i)][\(j)]" + (problem.position.map { "[\($0)]" } ?? "")
                        throw ConditionError(path: place, message: problem.message)
                    }
                }
                prepared.append(preparedRings)
            }
            region = .polygon(PolygonRegion(parts: prepared))
        case .corridor(let line, let halfWidth):
            guard line.count >= 2 else {
                throw ConditionError(path: "coordinates", message: "a corridor's line needs at least 2 positions")
            }
            guard halfWidth.isFinite, halfWidth > 0 else {
                throw ConditionError(path: "width", message: "width \(halfWidth) must be a positive number of metres")
            }
            guard halfWidth <= ConditionLimits.maximumCorridorWidth else {
                throw ConditionError(path: "width", message: "width \(halfWidth) m is larger than 100 km")
            }
            region = .corridor(CorridorRegion(line: unwrapLongitudes(line), halfWidth: halfWidth))
        }
    }

    /// The geometry as defined. Read back from the prepared region rather than stored beside it, which
    /// would hold every vertex twice (a third of the memory at 100,000 conditions).
    public var geometry: ConditionGeometry {
        switch region {
        case .circle(let c): .circle(center: c.center, radius: c.radius)
        case .polygon(let p): .polygon(parts: p.coordinateParts)
        case .corridor(let c):
            .corridor(
                line: c.line.map { Coordinate(latitude: $0.y, longitude: wrapLongitude($0.x)) }, halfWidth: c.halfWidth)
        }
    }

    /// Number of positions in the geometry.
    public var vertexCount: Int {
        switch region {
        case .circle: 1
        case .polygon(let p): p.vertexCount
        case .corridor(let c): c.vertexCount
        }
    }
}

extension Condition: Equatable {
    public static func == (l: Condition, r: Condition) -> Bool {
        l.geometry == r.geometry && l.name == r.name && l.dwell == r.dwell && l.version == r.version
            && l.minimumDuration == r.minimumDuration && l.rules == r.rules
    }
}

/// Bounds on what a condition may be.
public enum ConditionLimits {
    /// Half the globe's circumference, roughly: a larger circle is a mistake.
    public static let maximumRadius = 20_000_000.0
    /// The corridor distance is measured in a local projection refined on the ellipsoid, which is
    /// meant for route-scale widths.
    public static let maximumCorridorWidth = 100_000.0
}

/// Why a condition's definition was refused, with the path of the offending value.
public struct ConditionError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

extension Condition {
    fileprivate static func box(_ rules: ConditionRules) -> Boxed<ConditionRules>? {
        rules.isEmpty ? nil : Boxed(rules)
    }

    /// A condition around a region already prepared from a trusted geometry (the store's decoder).
    init(
        trustedRegion region: Region, name: String?, dwell: Double?, version: Int64?, minimumDuration: Double?,
        rules: ConditionRules = ConditionRules()
    ) {
        self.name = name
        boxedRules = Self.box(rules)
        self.dwell = dwell
        self.version = version
        self.minimumDuration = minimumDuration
        self.region = region
    }

    /// Prepares a geometry that was validated when it was first accepted (read back from the store):
    /// the same preparation as `init(geometry:...)` without the checks, which for 100,000 polygons would
    /// cost more than the whole restore may take.
    init(
        trustedGeometry geometry: ConditionGeometry, name: String?, dwell: Double?, version: Int64?,
        minimumDuration: Double?,
        rules: ConditionRules = ConditionRules()
    ) {
        let region: Region =
            switch geometry {
            case .circle(let center, let radius): .circle(CircleRegion(center: center, radius: radius))
            case .polygon(let parts): .polygon(PolygonRegion(parts: parts.map { $0.map(unwrapLongitudes) }))
            case .corridor(let line, let halfWidth):
                .corridor(CorridorRegion(line: unwrapLongitudes(line), halfWidth: halfWidth))
            }
        self.init(
            trustedRegion: region, name: name, dwell: dwell, version: version, minimumDuration: minimumDuration,
            rules: rules)
    }
}
