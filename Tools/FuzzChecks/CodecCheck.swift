import GeofenceCore

/// A stored condition read back from a store that may be corrupt: the codec either refuses the bytes with
/// an error or gives a condition that encodes and decodes to itself.
enum CodecCheck {
    static func problems(_ input: [UInt8]) -> [String] {
        guard let condition = try? ConditionCodec.decode(input) else { return [] }
        let encoded = ConditionCodec.encode(condition)
        do {
            let again = try ConditionCodec.decode(encoded)
            return again == condition
                ? [] : ["a decoded condition, encoded and decoded again, differs: \(condition) against \(again)"]
        } catch {
            return ["a decoded condition, encoded again, is refused: \(error)"]
        }
    }
}
