import Deflate

/// An 8-bit RGB or RGBA PNG decoded to pixels, for tests that look at a rasterised map or a screenshot.
public struct PNGImage {
    public let width: Int, height: Int
    /// RGBA, row by row.
    private let pixels: [UInt8]

    public struct Invalid: Error, CustomStringConvertible { public var description: String }

    public init(_ bytes: [UInt8]) throws {
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw Invalid(description: "not a PNG")
        }
        func u32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        var at = 8
        var data: [UInt8] = []
        var header: ArraySlice<UInt8> = []
        while at + 8 <= bytes.count {
            let length = u32(at)
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            let body = bytes[(at + 8)..<(at + 8 + length)]
            if type == "IHDR" { header = body } else if type == "IDAT" { data += body }
            at += 12 + length
        }
        guard header.count == 13 else { throw Invalid(description: "no IHDR") }
        let h = Array(header)
        width = h[0..<4].reduce(0) { $0 << 8 | Int($1) }
        height = h[4..<8].reduce(0) { $0 << 8 | Int($1) }
        guard h[8] == 8, h[12] == 0, h[9] == 6 || h[9] == 2 else {
            throw Invalid(description: "only 8-bit RGB(A), not interlaced")
        }
        let channels = h[9] == 6 ? 4 : 3
        let stride = width * channels
        let raw = try Deflate.decompress(data, size: height * (stride + 1))
        var out = [UInt8](repeating: 255, count: width * height * 4)
        var previous = [UInt8](repeating: 0, count: stride)
        var row = [UInt8](repeating: 0, count: stride)
        for y in 0..<height {
            let filter = raw[y * (stride + 1)]
            for i in 0..<stride {
                let x = raw[y * (stride + 1) + 1 + i]
                let a = i >= channels ? Int(row[i - channels]) : 0
                let b = Int(previous[i])
                let c = i >= channels ? Int(previous[i - channels]) : 0
                let predicted: Int =
                    switch filter {
                    case 1: a
                    case 2: b
                    case 3: (a + b) / 2
                    case 4:
                        {
                            let p = a + b - c
                            let pa = abs(p - a)
                            let pb = abs(p - b)
                            let pc = abs(p - c)
                            return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
                        }()
                    default: 0
                    }
                row[i] = UInt8(truncatingIfNeeded: Int(x) + predicted)
            }
            for px in 0..<width {
                for k in 0..<channels { out[(y * width + px) * 4 + k] = row[px * channels + k] }
            }
            previous = row
        }
        pixels = out
    }

    /// The pixel's red, green, blue and alpha.
    public subscript(x: Int, y: Int) -> (r: Int, g: Int, b: Int, a: Int) {
        let i = (y * width + x) * 4
        return (Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2]), Int(pixels[i + 3]))
    }
}
