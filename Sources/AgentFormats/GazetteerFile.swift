import Foundation
import Geocoding
import SystemMemory

/// Where the gazetteer file is, and reading it: the I/O edge of `Geocoding`.
package enum GazetteerFile {
    /// The environment variable that names the file.
    package static let environmentVariable = "GEOFENCE_GAZETTEER"
    /// Where the file is looked for, relative to a directory above the executable (a checkout's
    /// `.build/debug/`), and where a package installs it.
    static let relativePath = "gazetteer/gazetteer.bin"
    static let installedPaths = [
        "/usr/local/share/geofence-agent/gazetteer.bin", "/usr/share/geofence-agent/gazetteer.bin",
    ]

    /// The file to use: `explicit`, else `$GEOFENCE_GAZETTEER`, else `gazetteer/gazetteer.bin` in a directory
    /// above the executable, else an installed copy. nil when none exists.
    package static func locate(explicit: String? = nil) -> String? {
        if let explicit { return explicit }
        if let path = ProcessInfo.processInfo.environment[environmentVariable], !path.isEmpty { return path }
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = directory.appendingPathComponent(relativePath).path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return installedPaths.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Maps the file and reads it in place: after the load's checks, only the pages lookups read stay in
    /// memory, and those are the file's, which the kernel can take back.
    package static func load(_ path: String) throws(GeocodingError) -> Gazetteer {
        let file: MappedFile
        do {
            file = try MappedFile(path: path)
        } catch {
            throw .dataNotLoaded("\(error) (scripts/setup builds it; GEOFENCE_GAZETTEER names another)")
        }
        do {
            let gazetteer = try Gazetteer(bytesIn: file.bytes, keptBy: file)
            file.dropResidentPages()
            return gazetteer
        } catch {
            throw .dataNotLoaded("\(path): \(error)")
        }
    }

    /// A geocoder over the located file, or one that says why there is none.
    package static func geocoder(explicit: String? = nil) -> Geocoder {
        guard let path = locate(explicit: explicit) else {
            return Geocoder(
                unavailable: .dataNotLoaded(
                    "no gazetteer found: scripts/setup builds gazetteer/gazetteer.bin; --gazetteer or \(environmentVariable) names another"
                ))
        }
        do {
            return Geocoder(gazetteer: try load(path))
        } catch {
            return Geocoder(unavailable: error)
        }
    }

    /// The attribution the data's licence asks for.
    package static let attribution =
        "Place data from GeoNames (geonames.org), CC BY 4.0; country outlines from Natural Earth (public domain)."
}
