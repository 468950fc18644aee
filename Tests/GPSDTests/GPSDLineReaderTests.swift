import Foundation
import GeofenceCore
import TestSupport
import Testing

@testable import GPSD

/// gpsd's reports cut into lines whatever the reads' boundaries.
@Suite(.offTheCooperativePool(.computing)) struct GPSDLineReaderTests {
    @Test func linesSurviveAnyChunking() throws {
        let lines = (0..<300).map { i in
            "{\"class\":\"TPV\",\"n\":\(i),\"pad\":\"\(String(repeating: "x", count: i * 7))\"}"
        }
        // CRLF or LF, as different servers end lines.
        let stream = Array(lines.enumerated().map { $0.element + ($0.offset % 3 == 0 ? "\r\n" : "\n") }.joined().utf8)
        var random = SplitMix64(seed: 5)
        let (read, write) = try pipePair()
        defer {
            close(read)
            close(write)
        }
        let reader = GPSDLineReader()
        var got: [String] = []
        var offset = 0
        while offset < stream.count {
            let n = min(stream.count - offset, Int.random(in: 1...700, using: &random))
            _ = stream[offset..<offset + n].withUnsafeBytes { Glibc.write(write, $0.baseAddress, n) }
            offset += n
            #expect(reader.wait(fd: read, microseconds: 1_000_000))
            try reader.read(fd: read) { got.append(String(decoding: $0, as: UTF8.self)) }
        }
        #expect(got == lines)
    }

    @Test func anOverlongLineIsDroppedWholeAndTheNextIsRead() throws {
        let (read, write) = try pipePair()
        defer {
            close(read)
            close(write)
        }
        let reader = GPSDLineReader()
        var got: [String] = []
        let long = Array(repeating: UInt8(ascii: "y"), count: GPSDLineReader.capacity * 2 + 10) + [0x0A]
        let after = Array("{\"class\":\"VERSION\"}\n".utf8)
        for chunk in stride(from: 0, to: long.count, by: 4096) {
            let part = Array(long[chunk..<min(long.count, chunk + 4096)])
            _ = part.withUnsafeBytes { Glibc.write(write, $0.baseAddress, part.count) }
            try reader.read(fd: read) { got.append(String(decoding: $0, as: UTF8.self)) }
        }
        _ = after.withUnsafeBytes { Glibc.write(write, $0.baseAddress, after.count) }
        try reader.read(fd: read) { got.append(String(decoding: $0, as: UTF8.self)) }
        #expect(got == ["{\"class\":\"VERSION\"}"])
        #expect(reader.oversizedLines == 1)
    }

    @Test func theEndOfTheStreamIsAClosedConnection() throws {
        let (read, write) = try pipePair()
        defer { close(read) }
        close(write)
        let reader = GPSDLineReader()
        #expect(throws: GPSError.connectionClosed) { try reader.read(fd: read) { _ in } }
    }

    private func pipePair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
        return (fds[0], fds[1])
    }
}
