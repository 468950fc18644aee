/// A geofence message's fingerprint in a manifest: FNV-1a, 64 bits, of the payload's bytes as published,
/// in 16 lower-case hex digits. It tells whether a vehicle holds what was published, not whether anyone
/// tampered with it: the broker's accounts do that.
public enum GeofenceDigest {
    public static func of(_ bytes: some Sequence<UInt8>) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Whether `text` is a digest as `of` writes it.
    public static func isValid(_ text: String) -> Bool {
        text.utf8.count == 16 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
