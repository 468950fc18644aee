import Foundation

/// Reads whole input files with errors that name the file.
package enum FileInput {
    package static func bytes(_ path: String, what: String) throws(AgentError) -> [UInt8] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw AgentError("\(what) file '\(path)' does not exist")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AgentError("\(what) file '\(path)' cannot be read (check its permissions)")
        }
        return Array(data)
    }

    /// What a file that is not JSON at all looks like (CSV, GPX or XML, plain text), from its first line;
    /// nil when it starts like JSON (its own parse error then says where it goes wrong).
    package static func notJSON(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes.prefix(512), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let first = text.first, first != "{", first != "[" else { return nil }
        let line = String(text.split(separator: "\n", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces)
        let shown = "'\(line.prefix(60))\(line.count > 60 ? "…" : "")'"
        if first == "<" { return "XML (GPX?), starting \(shown)" }
        if line.contains(",") { return "CSV, starting \(shown)" }
        return "text, starting \(shown)"
    }
}
