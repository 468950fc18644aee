/// The properties the fuzz targets (Fuzz/) check on every input, and that the replay tests check on the
/// seed corpora and on every input a fuzzer once failed on. Each check returns what was wrong, nothing
/// when the input was handled as it should be: refused with an error, or accepted and consistent.
public enum FuzzCheck: String, CaseIterable, Sendable {
    case json = "JSON"
    case geoJSON = "GeoJSON"
    case codec = "Codec"

    /// The problems the input shows (empty: none).
    public func problems(_ input: [UInt8]) -> [String] {
        switch self {
        case .json: JSONCheck.problems(input)
        case .geoJSON: GeoJSONCheck.problems(input)
        case .codec: CodecCheck.problems(input)
        }
    }
}
