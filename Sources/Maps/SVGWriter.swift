import Foundation

/// Builds an SVG document element by element, with numbers written to a tenth of a pixel, so that the same
/// drawing gives the same bytes on every machine.
struct SVGWriter {
    let width: Double, height: Double
    private var body: [String] = []

    static let white = "#ffffff", ink = "#222222"

    init(width: Double, height: Double) { (self.width, self.height) = (width, height) }

    var document: String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">

        """ + body.joined(separator: "\n") + "\n</svg>\n"
    }

    func n(_ value: Double) -> String {
        let text = String(format: "%.1f", value.isFinite ? value : 0)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text == "-0" ? "0" : text
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String, opacity: Double = 1) {
        body.append(
            #"<rect x="\#(n(x))" y="\#(n(y))" width="\#(n(width))" height="\#(n(height))" fill="\#(fill)"\#(opacity < 1 ? #" fill-opacity="\#(opacity)""# : "")/>"#
        )
    }

    mutating func circle(x: Double, y: Double, r: Double, fill: String, stroke: String, strokeWidth: Double) {
        body.append(
            #"<circle cx="\#(n(x))" cy="\#(n(y))" r="\#(n(r))" fill="\#(fill)" stroke="\#(stroke)" stroke-width="\#(n(strokeWidth))"/>"#
        )
    }

    mutating func line(
        from a: (x: Double, y: Double), to b: (x: Double, y: Double), stroke: String, width: Double, dash: String?
    ) {
        body.append(
            #"<line x1="\#(n(a.x))" y1="\#(n(a.y))" x2="\#(n(b.x))" y2="\#(n(b.y))" stroke="\#(stroke)" stroke-width="\#(n(width))" stroke-linecap="round"\#(dash.map { #" stroke-dasharray="\#($0)""# } ?? "")/>"#
        )
    }

    /// Closed rings, filled by the even-odd rule, so that holes show.
    mutating func path(
        _ rings: [[(x: Double, y: Double)]], fill: String, stroke: String?, strokeWidth: Double = 1.5,
        fillOpacity: Double = 1, title: String? = nil
    ) {
        let d = rings.filter { !$0.isEmpty }.map { ring in
            "M" + ring.map { "\(n($0.x)),\(n($0.y))" }.joined(separator: "L") + "Z"
        }.joined()
        guard !d.isEmpty else { return }
        var attributes = #"d="\#(d)" fill="\#(fill)" fill-rule="evenodd""#
        if fillOpacity < 1 { attributes += #" fill-opacity="\#(fillOpacity)""# }
        attributes +=
            stroke.map { #" stroke="\#($0)" stroke-width="\#(n(strokeWidth))" stroke-linejoin="round""# }
            ?? #" stroke="none""#
        body.append(
            title.map { "<path \(attributes)><title>\(Self.escaped($0))</title></path>" } ?? "<path \(attributes)/>")
    }

    mutating func polyline(
        _ points: [(x: Double, y: Double)], stroke: String, width: Double, opacity: Double, title: String?
    ) {
        guard !points.isEmpty else { return }
        let attributes =
            #"points="\#(points.map { "\(n($0.x)),\(n($0.y))" }.joined(separator: " "))" fill="none" stroke="\#(stroke)" stroke-width="\#(n(width))" stroke-opacity="\#(opacity)" stroke-linecap="round" stroke-linejoin="round""#
        body.append(
            title.map { "<polyline \(attributes)><title>\(Self.escaped($0))</title></polyline>" }
                ?? "<polyline \(attributes)/>")
    }

    /// An event's mark: a triangle up (enter), down (exit), a dot (dwell), a diamond (crossed).
    mutating func marker(_ kind: String, x: Double, y: Double, color: String, title: String? = nil) {
        let shape: String =
            switch kind {
            case "enter": "M\(n(x)),\(n(y - 6))L\(n(x + 6)),\(n(y + 5))L\(n(x - 6)),\(n(y + 5))Z"
            case "exit": "M\(n(x)),\(n(y + 6))L\(n(x + 6)),\(n(y - 5))L\(n(x - 6)),\(n(y - 5))Z"
            case "crossed": "M\(n(x)),\(n(y - 6))L\(n(x + 6)),\(n(y))L\(n(x)),\(n(y + 6))L\(n(x - 6)),\(n(y))Z"
            default: "M\(n(x - 5)),\(n(y))a5,5 0 1,0 10,0a5,5 0 1,0 -10,0Z"
            }
        let attributes = #"d="\#(shape)" fill="\#(color)" stroke="\#(Self.white)" stroke-width="1""#
        body.append(
            title.map { "<path \(attributes)><title>\(Self.escaped($0))</title></path>" } ?? "<path \(attributes)/>")
    }

    /// Text, with a white halo when it sits on the map.
    mutating func text(_ text: String, x: Double, y: Double, size: Double, anchor: String, halo: Bool) {
        let halo = halo ? #" stroke="\#(Self.white)" stroke-width="3" paint-order="stroke""# : ""
        body.append(
            #"<text x="\#(n(x))" y="\#(n(y))" font-size="\#(n(size))" text-anchor="\#(anchor)" fill="\#(Self.ink)"\#(halo)>\#(Self.escaped(text))</text>"#
        )
    }
}
