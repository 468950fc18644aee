import AgentFormats
import Foundation

/// node_exporter's textfile collector: the metrics written to `path` (`*.prom`) through a temporary file
/// renamed over it, so the collector never reads half a file.
struct MetricsTextfile: Sendable {
    let path: String

    func write(_ text: String) throws {
        let temporary = path + ".tmp"
        try text.write(toFile: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary, path) == 0 else {
            throw AgentError(
                "metrics.textfile: cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
        }
    }
}
