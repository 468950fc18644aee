/// A small, strict XML reader for GPX files: elements with their attributes and line, text, and the end of
/// each element. It checks what a GPX reader relies on (tags nest and close, attributes are quoted,
/// references are known) and skips the declaration, comments, processing instructions and a DOCTYPE.
/// It exists because FoundationXML's parser crashes the process on some malformed files (a tag name that
/// is not UTF-8, a processing instruction with no data: found by fuzzing), and a technician's bad file
/// must get an error. Pure: bytes in, events out.
enum XMLEvents {
    enum Event: Equatable {
        case start(name: String, attributes: [String: String], line: Int)
        case text(String)
        case end(name: String, line: Int)
    }

    struct Failure: Error, Equatable {
        var line: Int
        var reason: String
    }

    /// The whole document's events, or its first fault.
    static func read(_ bytes: [UInt8]) throws(Failure) -> [Event] {
        var scanner = Scanner(bytes: bytes)
        var events: [Event] = []
        while let event = try scanner.next() { events.append(event) }
        return events
    }

    /// Reads a document an event at a time, so that a long file is not held as events as well as bytes.
    struct Scanner {
        private let bytes: [UInt8]
        private var at = 0
        private var line = 1
        private var open: [String] = []
        /// The end of a tag closed in itself (`<a/>`), given after its start.
        private var pending: Event?
        private var sawRoot = false

        init(bytes: [UInt8]) {
            self.bytes = bytes
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { at = 3 }  // a byte order mark
        }

        private func fail(_ reason: String) -> Failure { Failure(line: line, reason: reason) }

        /// The next event, or nil at the end of a well-formed document.
        mutating func next() throws(Failure) -> Event? {
            if let event = pending {
                pending = nil
                return event
            }
            while at < bytes.count {
                let event = bytes[at] == UInt8(ascii: "<") ? try markup() : try text()
                if let event { return event }
            }
            if let unclosed = open.last {
                throw fail("the file ends before <\(unclosed.clipped)> is closed (truncated?)")
            }
            if !sawRoot { throw fail("the file is empty or not XML") }
            return nil
        }

        private mutating func markup() throws(Failure) -> Event? {
            if starts("<?") {
                try skip(past: "?>", what: "a processing instruction")
            } else if starts("<!--") {
                try skip(past: "-->", what: "a comment")
            } else if starts("<![CDATA[") {
                let start = at + 9
                try skip(past: "]]>", what: "a CDATA section")
                return try content(String(decoding: bytes[start..<(at - 3)], as: UTF8.self))
            } else if starts("<!") {
                try doctype()
            } else if starts("</") {
                return try closingTag()
            } else {
                return try openingTag()
            }
            return nil
        }

        private mutating func openingTag() throws(Failure) -> Event {
            let tagLine = line
            at += 1
            let name = try self.name()
            if open.isEmpty && sawRoot { throw fail("content after the root element") }
            var attributes: [String: String] = [:]
            while true {
                skipSpace()
                guard at < bytes.count else { throw fail("a tag is not closed") }
                if bytes[at] == UInt8(ascii: ">") {
                    at += 1
                    break
                }
                if starts("/>") {
                    at += 2
                    pending = .end(name: name, line: line)
                    sawRoot = true
                    return .start(name: name, attributes: attributes, line: tagLine)
                }
                let key = try self.name()
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "=") else {
                    throw fail("attribute '\(key.clipped)' has no value")
                }
                at += 1
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") || bytes[at] == UInt8(ascii: "'") else {
                    throw fail("attribute '\(key.clipped)' is not quoted")
                }
                let quote = bytes[at]
                at += 1
                let start = at
                while at < bytes.count, bytes[at] != quote {
                    if bytes[at] == UInt8(ascii: "<") { throw fail("attribute '\(key.clipped)' holds a '<'") }
                    if bytes[at] == UInt8(ascii: "\n") { line += 1 }
                    at += 1
                }
                guard at < bytes.count else { throw fail("a tag is not closed") }
                if attributes[key] != nil { throw fail("attribute '\(key.clipped)' is given twice") }
                attributes[key] = try decoded(bytes[start..<at])
                at += 1
            }
            open.append(name)
            sawRoot = true
            return .start(name: name, attributes: attributes, line: tagLine)
        }

        private mutating func closingTag() throws(Failure) -> Event {
            at += 2
            let name = try self.name()
            skipSpace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: ">") else { throw fail("a tag is not closed") }
            at += 1
            guard open.last == name else { throw fail("a closing tag does not match its opening tag") }
            open.removeLast()
            return .end(name: name, line: line)
        }

        private mutating func text() throws(Failure) -> Event? {
            let start = at
            while at < bytes.count, bytes[at] != UInt8(ascii: "<") {
                if bytes[at] == UInt8(ascii: "\n") { line += 1 }
                at += 1
            }
            return try content(try decoded(bytes[start..<at]))
        }

        private func content(_ text: String) throws(Failure) -> Event? {
            if open.isEmpty {
                guard text.allSatisfy(\.isWhitespace) else { throw fail("text outside the root element") }
                return nil
            }
            return .text(text)
        }

        /// A DOCTYPE, with an internal subset in brackets if any.
        private mutating func doctype() throws(Failure) {
            var depth = 0
            while at < bytes.count {
                switch bytes[at] {
                case UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "]"): depth -= 1
                case UInt8(ascii: ">") where depth <= 0:
                    at += 1
                    return
                case UInt8(ascii: "\n"): line += 1
                default: break
                }
                at += 1
            }
            throw fail("a declaration is not closed")
        }

        private mutating func name() throws(Failure) -> String {
            let start = at
            while at < bytes.count, !Self.endsName(bytes[at]) { at += 1 }
            guard at > start else {
                throw fail(at < bytes.count ? "a tag or attribute has no name" : "a tag is not closed")
            }
            return String(decoding: bytes[start..<at], as: UTF8.self)
        }

        private static func endsName(_ b: UInt8) -> Bool {
            b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == UInt8(ascii: ">") || b == UInt8(ascii: "/")
                || b == UInt8(ascii: "=") || b == UInt8(ascii: "<") || b == UInt8(ascii: "\"") || b == UInt8(ascii: "'")
        }

        private mutating func skipSpace() {
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0A || bytes[at] == 0x0D {
                if bytes[at] == 0x0A { line += 1 }
                at += 1
            }
        }

        /// Whether the bytes at `at` begin with `prefix` (static: no array made a test, as a `String`'s needs).
        private func starts(_ prefix: StaticString) -> Bool {
            prefix.withUTF8Buffer { p in bytes.count - at >= p.count && bytes[at..<(at + p.count)].elementsEqual(p) }
        }

        private mutating func skip(past end: StaticString, what: String) throws(Failure) {
            while at < bytes.count {
                if starts(end) {
                    at += end.utf8CodeUnitCount
                    return
                }
                if bytes[at] == 0x0A { line += 1 }
                at += 1
            }
            throw fail("\(what) is not closed")
        }

        /// Text with its character and entity references replaced.
        private func decoded(_ raw: ArraySlice<UInt8>) throws(Failure) -> String {
            guard raw.contains(UInt8(ascii: "&")) else { return String(decoding: raw, as: UTF8.self) }
            var out = String.UnicodeScalarView()
            var i = raw.startIndex
            while i < raw.endIndex {
                guard raw[i] == UInt8(ascii: "&") else {
                    let next = raw[i...].firstIndex(of: UInt8(ascii: "&")) ?? raw.endIndex
                    out.append(contentsOf: String(decoding: raw[i..<next], as: UTF8.self).unicodeScalars)
                    i = next
                    continue
                }
                guard let semicolon = raw[i...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                    throw fail("an '&' that starts no reference")
                }
                let reference = String(decoding: raw[(i + 1)..<semicolon], as: UTF8.self)
                switch reference {
                case "amp": out.append("&")
                case "lt": out.append("<")
                case "gt": out.append(">")
                case "quot": out.append("\"")
                case "apos": out.append("'")
                default:
                    let digits =
                        reference.hasPrefix("#x")
                        ? (reference.dropFirst(2), 16)
                        : reference.hasPrefix("#") ? (reference.dropFirst(), 10) : ("", 0)
                    guard digits.1 > 0, let value = UInt32(digits.0, radix: digits.1),
                        let scalar = Unicode.Scalar(value), value != 0
                    else {
                        throw fail("unknown reference '&\(reference.clipped);'")
                    }
                    out.append(scalar)
                }
                i = semicolon + 1
            }
            return String(out)
        }
    }
}
