import Foundation

/// Reads whole input files with errors that name the file.
enum FileInput {
    static func bytes(_ path: String, what: String) throws(AgentError) -> [UInt8] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw AgentError("\(what) file '\(path)' does not exist")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AgentError("\(what) file '\(path)' cannot be read (check its permissions)")
        }
        return Array(data)
    }
}
