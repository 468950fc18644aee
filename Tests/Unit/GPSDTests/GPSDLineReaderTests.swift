import Foundation
import GPSDTestSupport
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
        var chunks: [Int] = []
        var total = 0
        while total < stream.count {
            chunks.append(min(stream.count - total, Int.random(in: 1...700, using: &random)))
            total += chunks.last!
        }
        #expect(try pump(stream, in: chunks) == lines)
    }

    @Test func anOverlongLineIsDroppedWholeAndTheNextIsRead() throws {
        let reader = GPSDLineReader()
        let long = Array(repeating: UInt8(ascii: "y"), count: GPSDLineReader.capacity * 2 + 10) + [0x0A]
        let after = Array("{\"class\":\"VERSION\"}\n".utf8)
        let chunks = Array(repeating: 4096, count: long.count / 4096) + [long.count % 4096, after.count]
        #expect(try pump(long + after, in: chunks, reader: reader) == ["{\"class\":\"VERSION\"}"])
        #expect(reader.oversizedLines == 1)
    }

    @Test func theEndOfTheStreamIsAClosedConnection() throws {
        let (read, write) = try socketPair()
        defer { close(read) }
        close(write)
        let reader = GPSDLineReader()
        #expect(throws: GPSError.connectionClosed) { try reader.read(fd: read, waitingUpTo: 1_000_000) }
    }

    @Test func aReadWithNothingToReadReturnsWhenItsTimeIsUp() throws {
        let (read, write) = try socketPair()
        defer {
            close(read)
            close(write)
        }
        let reader = GPSDLineReader()
        #expect(try reader.read(fd: read, waitingUpTo: 0) == false)
        #expect(try reader.read(fd: read, waitingUpTo: 20_000) == false)
        // A line that comes later is read whole, the timeouts before it notwithstanding.
        _ = Array("{\"class\":\"TPV\"}\n".utf8).withUnsafeBytes { Glibc.write(write, $0.baseAddress, $0.count) }
        #expect(try reader.read(fd: read, waitingUpTo: 1_000_000))
        var lines: [String] = []
        reader.forEachLine { lines.append(String(decoding: $0, as: UTF8.self)) }
        #expect(lines == ["{\"class\":\"TPV\"}"])
    }

    /// Writes `bytes` into a stream socket in chunks of the given sizes, reading after each, and returns the
    /// lines.
    private func pump(_ bytes: [UInt8], in chunks: [Int], reader: GPSDLineReader = GPSDLineReader()) throws
        -> [String]
    {
        let (read, write) = try socketPair()
        defer {
            close(read)
            close(write)
        }
        var lines: [String] = []
        var offset = 0
        for n in chunks where n > 0 {
            _ = bytes[offset..<offset + n].withUnsafeBytes { Glibc.write(write, $0.baseAddress, n) }
            offset += n
            // A read takes what fits after a kept partial line: read until the chunk is all in.
            repeat {
                #expect(try reader.read(fd: read, waitingUpTo: 1_000_000))
                reader.forEachLine { lines.append(String(decoding: $0, as: UTF8.self)) }
            } while try pendingBytes(read) > 0
        }
        return lines
    }

    /// The bytes written to the socket and not yet read.
    private func pendingBytes(_ fd: Int32) throws -> Int {
        var count: Int32 = 0
        guard ioctl(fd, UInt(FIONREAD), &count) == 0 else { throw POSIXError(.EBADF) }
        return Int(count)
    }

    /// A connected pair of Unix stream sockets: the reader waits under a socket's receive timeout.
    private func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EMFILE) }
        return (fds[0], fds[1])
    }
}
