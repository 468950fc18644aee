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

/// A deterministic generator so that every failure reproduces.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func fix(_ lat: Double, _ lon: Double, t: Double, accuracy: Double = 5) -> Location {
    Location(coordinate: Coordinate(latitude: lat, longitude: lon), horizontalAccuracy: accuracy,
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

func feature(_ id: String, _ geometry: String, _ properties: String = "{}") -> String {
    #"{"type":"Feature","id":"\#(id)","geometry":\#(geometry),"properties":\#(properties)}"#
}

func decode(_ json: String, limits: GeoJSONLimits = .default) -> GeoJSONLoad {
    GeoJSONConditions.decode(Array(json.utf8), limits: limits)
}
