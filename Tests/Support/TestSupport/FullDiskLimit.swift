import Foundation
import GeofenceStore

/// A file-size limit (`prlimit --fsize`) that fills the disk for an agent's store: its next write past what
/// the store's files hold now fails. The limit counts offsets, not growth. The log's file is written ahead
/// with zeros, so what it holds ends at its last non-zero byte, where its next commit writes.
public func fullDiskLimit(storePath: String) -> Int {
    let database = (try? FileManager.default.attributesOfItem(atPath: storePath)[.size] as? Int) ?? 0
    let log = (try? Data(contentsOf: URL(fileURLWithPath: StorePaths(storePath).writeAheadLog))) ?? Data()
    let logUsed = (log.lastIndex { $0 != 0 } ?? -1) + 1
    return max(database, logUsed) + 4096
}
