import AgentFormats
import Foundation
import Geocoding
import GeofenceAgent
import GeofenceCore

/// What `geofence-agent geocode` and `reverse` do: one query from the command line, or many from stdin.
package enum GeocodeJobs {
    /// A placemark as one JSON object (docs/geocoding.md).
    package static func json(_ p: Placemark) -> String {
        var line = JSONLine()
        line.add("name", p.name)
        line.add("locality", p.locality)
        line.add("subAdministrativeArea", orNull: p.subAdministrativeArea)
        line.add("administrativeArea", orNull: p.administrativeArea)
        line.add("isoCountryCode", orNull: p.isoCountryCode)
        line.add("country", orNull: p.country)
        line.add("timeZone", orNull: p.timeZoneIdentifier)
        line.add("latitude", p.location.latitude)
        line.add("longitude", p.location.longitude)
        line.add("population", p.population)
        if let d = p.distance { line.add("distance", (d * 10).rounded() / 10) }
        return line.text
    }

    /// One line a person reads.
    package static func text(_ p: Placemark) -> String {
        let area = [p.locality, p.administrativeArea, p.isoCountryCode].compactMap { $0 }.filter { !$0.isEmpty }.joined(
            separator: ", ")
        let distance =
            p.distance.map {
                $0 < 1000 ? String(format: ", %.0f m away", $0) : String(format: ", %.1f km away", $0 / 1000)
            } ?? ""
        return
            "\(area) (\(String(format: "%.5f, %.5f", p.location.latitude, p.location.longitude)), population \(p.population)\(distance))"
    }

    static func agentError(_ error: GeocodingError, at place: String? = nil) -> AgentError {
        switch error {
        case .noMatch: AgentError((place.map { "\($0): " } ?? "") + error.description, exitCode: 1)
        default: AgentError((place.map { "\($0): " } ?? "") + error.description)
        }
    }

    // MARK: reverse

    package static func reverse(
        latitude: Double, longitude: Double, asJSON: Bool, geocoder: Geocoder, emit: (String) -> Void
    ) async throws(AgentError) {
        do {
            let p = try await geocoder.reverseGeocodeLocation(Coordinate(latitude: latitude, longitude: longitude))[0]
            emit(asJSON ? json(p) : text(p))
        } catch {
            throw agentError(error)
        }
    }

    /// Queries from `lines`: each "lat,lon", or a CSV whose header names `lat` and `lon`. One JSON line each,
    /// `{}` for a line that gets no answer (its reason on stderr with its line number); exit status 1 if any.
    package static func reverseMany(
        _ lines: [String], source: String, geocoder: Geocoder, emit: (String) -> Void, warn: (String) -> Void
    ) async throws(AgentError) {
        let gazetteer: Gazetteer
        do { gazetteer = try geocoder.data() } catch { throw agentError(error) }
        var columns = (lat: 0, lon: 1)
        var first = 0
        var failures = 0
        if let header = lines.first, let named = PointsCSV.columns(header[...]) {
            columns = named
            first = 1
        }
        for n in first..<lines.count {
            let position = "\(source):\(n + 1)"
            let fields = lines[n].split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: " \"\t")
            }
            guard fields.count > max(columns.lat, columns.lon), let lat = Double(fields[columns.lat]),
                let lon = Double(fields[columns.lon])
            else {
                warn("error: \(position): expected a latitude and a longitude (\"52.51,6.09\"), got '\(lines[n])'")
                emit("{}")
                failures += 1
                continue
            }
            do {
                emit(json(try gazetteer.reverse(Coordinate(latitude: lat, longitude: lon))))
            } catch {
                warn("error: \(position): \(error)")
                emit("{}")
                failures += 1
            }
        }
        if failures > 0 { throw AgentError("\(failures) of \(lines.count - first) queries got no answer", exitCode: 1) }
    }

    // MARK: geocode

    package static func geocode(
        _ query: String, region: String?, limit: Int, asJSON: Bool, geocoder: Geocoder, emit: (String) -> Void
    ) async throws(AgentError) {
        do {
            for p in try await geocoder.geocodeAddressString(query, in: region, limit: limit) {
                emit(asJSON ? json(p) : text(p))
            }
        } catch {
            throw agentError(error)
        }
    }

    /// One query per line; the best place for each as one JSON line, `{}` when there is none.
    package static func geocodeMany(
        _ lines: [String], source: String, region: String?, geocoder: Geocoder,
        emit: (String) -> Void, warn: (String) -> Void
    ) async throws(AgentError) {
        let gazetteer: Gazetteer
        do { gazetteer = try geocoder.data() } catch { throw agentError(error) }
        var failures = 0
        for (n, line) in lines.enumerated() {
            do {
                emit(json(try gazetteer.forward(line, region: region, limit: 1)[0]))
            } catch {
                warn("error: \(source):\(n + 1): \(error)")
                emit("{}")
                failures += 1
            }
        }
        if failures > 0 { throw AgentError("\(failures) of \(lines.count) queries got no answer", exitCode: 1) }
    }

    /// Lines of standard input, without their line ends (a last empty line is not a query).
    package static func standardInputLines() -> [String] {
        var lines = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).map {
                String($0.hasSuffix("\r") ? $0.dropLast() : $0)
            }
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}
