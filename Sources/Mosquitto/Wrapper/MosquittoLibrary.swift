import CMosquitto

/// libmosquitto's process-wide initialisation, done once before the first handle.
enum MosquittoLibrary {
    private static let initialised: Bool = {
        mosquitto_lib_init()
        return true
    }()

    static func ensureInitialised() { _ = initialised }

    /// "2.0.11", for status reports.
    static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}
