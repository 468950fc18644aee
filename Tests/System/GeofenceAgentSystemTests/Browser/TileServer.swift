import AgentTestSupport
import Deflate
import Foundation
import LocalServers

/// A street-map tile server of the test's own: solid-colour 256-pixel PNG tiles written for a range of
/// zooms and tiles, served by Python's http.server on a loopback port, stopped by its PID. Each tile's
/// colour is `colour(z, x, y)`, so that a test can tell which tile it sees.
final class TileServer {
    let directory: URL
    let port: Int
    private let pid: pid_t

    /// Writes the tiles around (latitude, longitude), `radius` tiles each way, at each of `zooms`.
    init(latitude: Double, longitude: Double, zooms: ClosedRange<Int>, radius: Int = 5) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tiles-\(UUID().uuidString)")
        for z in zooms {
            let (cx, cy) = Self.tile(latitude: latitude, longitude: longitude, zoom: z)
            for x in (cx - radius)...(cx + radius) {
                let column = directory.appendingPathComponent("\(z)/\(x)")
                try FileManager.default.createDirectory(at: column, withIntermediateDirectories: true)
                for y in (cy - radius)...(cy + radius) {
                    let png = Self.png(colour: Self.colour(z: z, x: x, y: y))
                    try Data(png).write(to: column.appendingPathComponent("\(y).png"))
                }
            }
        }
        port = try LocalProcess.freePort()
        pid = try LocalProcess.spawn(
            "/usr/bin/python3",
            ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", directory.path],
            standardError: directory.appendingPathComponent("server.log").path)
        try LocalProcess.waitUntilListening(port: port, pid: pid, name: "http.server")
    }

    deinit {
        LocalProcess.terminate(pid)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The URL template for Leaflet.
    var template: String { "http://127.0.0.1:\(port)/{z}/{x}/{y}.png" }

    /// The tile of a point at a zoom (Web Mercator, as Leaflet numbers them).
    static func tile(latitude: Double, longitude: Double, zoom: Int) -> (Int, Int) {
        let n = Double(1 << zoom)
        let phi = latitude * .pi / 180
        let x = (longitude + 180) / 360 * n
        let y = (1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2 * n
        return (Int(x), Int(y))
    }

    static func colour(z: Int, x: Int, y: Int) -> (UInt8, UInt8, UInt8) {
        (UInt8(40 + (x * 37) % 180), UInt8(40 + (y * 53) % 180), UInt8(40 + (z * 71) % 180))
    }

    /// A 256×256 PNG of one colour: an RGB image, each row filtered with type 0, in one IDAT.
    static func png(colour: (UInt8, UInt8, UInt8)) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity(256 * (1 + 256 * 3))
        for _ in 0..<256 {
            raw.append(0)
            for _ in 0..<256 { raw += [colour.0, colour.1, colour.2] }
        }
        var header: [UInt8] = []
        header += bigEndian(256) + bigEndian(256) + [8, 2, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header)
            + chunk("IDAT", Deflate.compress(raw)) + chunk("IEND", [])
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
