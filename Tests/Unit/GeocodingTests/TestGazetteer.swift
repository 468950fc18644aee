import Foundation
import Geocoding
import TestSupport

/// The gazetteer scripts/setup builds (gazetteer/gazetteer.bin at the repository's root), loaded once.
enum TestGazetteer {
    static let path = Repository.url("gazetteer/gazetteer.bin").path

    static let shared: Gazetteer = {
        guard let data = FileManager.default.contents(atPath: path) else {
            fatalError("\(path) is missing: run scripts/setup, which builds it from GeoNames and Natural Earth data")
        }
        return try! Gazetteer(fileBytes: [UInt8](data))
    }()
}
