import Foundation

@testable import GeofenceCore

enum Fixtures {
    static func url(_ name: String, _ ext: String) -> URL {
        guard let url = Bundle.module.url(forResource: name, withExtension: ext, subdirectory: "Fixtures") else {
            fatalError("missing test fixture \(name).\(ext)")
        }
        return url
    }

    static func bytes(_ name: String, _ ext: String) throws -> [UInt8] {
        Array(try Data(contentsOf: url(name, ext)))
    }
}

func fix(_ lat: Double, _ lon: Double, t: Double, accuracy: Double = 5) -> Location {
    Location(
        coordinate: Coordinate(latitude: lat, longitude: lon), horizontalAccuracy: accuracy,
        timestamp: Date(timeIntervalSince1970: 1_700_000_000 + t))
}

/// The point `metres` from `origin` along `bearing` degrees, on a local tangent plane (fine below a few km).
func offset(_ origin: Coordinate, metres: Double, bearing: Double) -> Coordinate {
    let p = LocalProjection(origin: origin)
    let rad = bearing * .pi / 180
    return Coordinate(
        latitude: origin.latitude + metres * cos(rad) / p.metresPerDegreeLatitude,
        longitude: origin.longitude + metres * sin(rad) / p.metresPerDegreeLongitude)
}

/// A point drawn uniformly in distance (not area) and bearing within `radius` metres of `origin`.
func scattered(around origin: Coordinate, within radius: Double, _ rng: inout SplitMix64) -> Coordinate {
    offset(
        origin, metres: Double.random(in: 0..<radius, using: &rng), bearing: Double.random(in: 0..<360, using: &rng))
}

func feature(_ id: String, _ geometry: String, _ properties: String = "{}") -> String {
    #"{"type":"Feature","id":"\#(id)","geometry":\#(geometry),"properties":\#(properties)}"#
}

func decode(_ json: String, limits: GeoJSONLimits = .default) -> GeoJSONLoad {
    GeoJSONConditions.decode(Array(json.utf8), limits: limits)
}
