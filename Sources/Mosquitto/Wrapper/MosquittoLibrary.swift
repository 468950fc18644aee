import CMosquitto

/// libmosquitto's process-wide initialisation, done once before the first handle.
enum MosquittoLibrary {
    private static let initialised: Bool = {
        mosquitto_lib_init()
        return true
    }()

    static func ensureInitialised() { _ = initialised }
}
