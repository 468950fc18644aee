/// MQTT's topic filters (`+` one level, `#` the rest), as a broker matches them.
enum TopicFilter {
    static func matches(_ filter: String, _ topic: String) -> Bool {
        let f = filter.split(separator: "/", omittingEmptySubsequences: false)
        let t = topic.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in f.enumerated() {
            if level == "#" { return true }
            guard index < t.count else { return false }
            if level != "+" && level != t[index] { return false }
        }
        return f.count == t.count
    }
}
