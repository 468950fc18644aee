import AgentFormats
import Foundation

/// node_exporter's textfile collector: the metrics written to `path` (`*.prom`) through a temporary file
/// renamed over it, so the collector never reads half a file.
struct MetricsTextfile: Sendable {
    let path: String

    func write(_ text: String) throws {
        do { try ReplacedFile.write(Array(text.utf8), to: path) } catch {
            throw AgentError("metrics.textfile: \(error)")
        }
    }
}
