/// The key a place name is looked up by: lowercased, a few letters folded (ß → ss, ø → o, ...), decomposed
/// (NFKD) with its combining marks dropped, and every run of characters that are not letters, digits or
/// spacing marks turned into one space. So "Zürich", "zurich" and "ZURICH" share a key, and "St. Gallen"
/// and "st gallen" too.
///
/// scripts/build-gazetteer.py computes the same key when it builds the file; the two must stay identical.
enum NameKey {
    static let specialFolds: [Unicode.Scalar: String] = [
        "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i",
    ]

    static func normalized(_ text: String) -> String {
        var folded = ""
        for scalar in text.lowercased().unicodeScalars {
            if let replacement = specialFolds[scalar] {
                folded += replacement
            } else {
                folded.unicodeScalars.append(scalar)
            }
        }
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in folded.decomposedStringWithCompatibilityMapping.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .nonspacingMark:
                continue
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                .decimalNumber, .letterNumber, .otherNumber, .spacingMark:
                if pendingSpace, !out.isEmpty { out.append(" ") }
                pendingSpace = false
                out.append(scalar)
            default:
                pendingSpace = true
            }
        }
        return String(out)
    }

    /// FNV-1a over a key's UTF-8 (a `normalized` name), its top `hashBits` bits.
    static func hash(ofKey key: String) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in key.utf8 {
            h ^= UInt64(byte)
            h = h &* 0x100_0000_01B3
        }
        return h >> UInt64(64 - GazetteerFormat.hashBits)
    }
}
