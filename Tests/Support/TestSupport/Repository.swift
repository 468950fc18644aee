import Foundation

/// The checkout the tests run from, found from this file's place in it (`Tests/Support/TestSupport/`): tests read the
/// examples, deploy files, docs and fixtures where they are checked in.
public enum Repository {
    /// The checkout's root.
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A file or folder by its path from the root, such as `examples/ijsselmeer.geojson`.
    public static func url(_ relativePath: String) -> URL { root.appendingPathComponent(relativePath) }
}
