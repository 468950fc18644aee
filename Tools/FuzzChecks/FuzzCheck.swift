/// The properties the fuzz targets (Fuzz/) check on every input, and that the replay tests check on the
/// seed corpora and on every input a fuzzer once failed on. Each check returns what was wrong, nothing
/// when the input was handled as it should be: refused with an error, or accepted and consistent.
public enum FuzzCheck: String, CaseIterable, Sendable {
    case json = "JSON"
    case geoJSON = "GeoJSON"
    case codec = "Codec"
    case config = "Config"
    case command = "Command"
    case gpx = "GPX"
    case pointsCSV = "PointsCSV"
    case fixes = "Fixes"
    case reports = "Reports"

    /// The problems the input shows (empty: none).
    public func problems(_ input: [UInt8]) -> [String] {
        switch self {
        case .json: JSONCheck.problems(input)
        case .geoJSON: GeoJSONCheck.problems(input)
        case .codec: CodecCheck.problems(input)
        case .config: ConfigCheck.problems(input)
        case .command: CommandCheck.problems(input)
        case .gpx: GPXCheck.problems(input)
        case .pointsCSV: PointsCSVCheck.problems(input)
        case .fixes: FixesCheck.problems(input)
        case .reports: ReportsCheck.problems(input)
        }
    }

    /// libFuzzer's entry point for this check: a problem stops the fuzzer, which keeps the input.
    public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> Int32 {
        let problems = problems(Array(UnsafeRawBufferPointer(start: start, count: count)))
        if !problems.isEmpty { fatalError(problems.joined(separator: "; ")) }
        return 0
    }
}

/// What every refusal must be: a message that says what was wrong and where, and is not the size of the
/// input that caused it (it goes to a log and to the `errors` topic).
func refusalProblems(_ message: String, startsWith place: String, limit: Int = 600) -> [String] {
    var problems: [String] = []
    if !message.hasPrefix(place) { problems.append("the error does not start with '\(place)': \(message.prefix(200))") }
    if message.utf8.count > limit {
        problems.append("an error of \(message.utf8.count) bytes: \(message.prefix(200))…")
    }
    return problems
}
