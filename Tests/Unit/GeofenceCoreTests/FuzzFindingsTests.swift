import Foundation
import GeofenceCore
import TestSupport
import Testing

/// What the fuzzers found (scripts/fuzz), pinned as plain unit tests beside the kept inputs in
/// Fuzz/Regressions.
@Suite(.offTheCooperativePool(.computing)) struct FuzzFindingsTests {
    /// A number beyond a Double's range was read as infinity, which the compact printer wrote as `inf`.
    @Test(arguments: ["1e400", "-1e400", "[122341567123456780923e999]"])
    func aNumberBeyondADoubleIsRefused(text: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Array(text.utf8)) }
        do { _ = try JSONParser.parse(Array(text.utf8)) } catch {
            #expect(error.message.contains("out of range"), "\(error)")
        }
    }

    @Test func theLargestDoublesAreStillRead() throws {
        #expect(try JSONParser.parse(Array("1.7976931348623157e308".utf8)) == .number(.greatestFiniteMagnitude))
        #expect(try JSONParser.parse(Array("4.9e-324".utf8)) == .number(.leastNonzeroMagnitude))
    }

    /// A stored row with an empty polygon crashed the restore (indexing the first of no parts); rows with
    /// NaN or far-off numbers read back unequal to themselves, and their dates crashed when printed.
    @Test(arguments: [
        ("polygon with no part", [UInt8]([1, 0, 1, 0, 0, 0, 0])),
        ("polygon part with no ring", [1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0]),
        ("ring of 3 points", [1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0] + [UInt8](repeating: 0, count: 48)),
        ("corridor of 1 point", [1, 0, 2] + bits(10) + [1, 0, 0, 0] + bits(52) + bits(4)),
        ("circle of NaN radius", [1, 0, 0] + bits(52) + bits(4) + bits(.nan)),
        ("circle at latitude 91", [1, 0, 0] + bits(91) + bits(4) + bits(100)),
        ("dwell of NaN", [1, 2] + bits(.nan) + [0] + bits(52) + bits(4) + bits(100)),
        ("expiry in the year 300000", [3, 32] + bits(9.4e12) + [0] + bits(52) + bits(4) + bits(100)),
        ("speed limit of infinity", [3, 64] + bits(.infinity) + [0] + bits(52) + bits(4) + bits(100)),
    ])
    func aCorruptRowIsRefusedWithAReason(what: String, bytes: [UInt8]) {
        #expect(throws: ConditionCodec.DecodingError.self, "\(what)") { try ConditionCodec.decode(bytes) }
    }

    @Test func aSoundCircleRowStillReads() throws {
        let condition = try ConditionCodec.decode([1, 0, 0] + bits(52) + bits(4) + bits(100))
        #expect(try ConditionCodec.decode(ConditionCodec.encode(condition)) == condition)
    }
}

private func bits(_ value: Double) -> [UInt8] {
    withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) }
}
