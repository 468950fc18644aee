import Foundation
import GeofenceCore

/// A self-contained SVG of `MapContent` in Web Mercator, as MKMapSnapshotter makes an image of a map:
/// basemap, graticule, the conditions' true outlines, the track coloured by speed, events, points, a
/// scale bar, a legend and the attribution. The same content gives the same bytes.
public struct MapSnapshot: Sendable {
    public var width: Double = 1200
    public var height: Double = 800
    /// The box to show (west, south, east, north); nil fits the overlays.
    public var box: (west: Double, south: Double, east: Double, north: Double)?

    public init(width: Double = 1200, height: Double = 800) { (self.width, self.height) = (width, height) }

    public enum Colors {
        public static let water = "#cfe3f0", land = "#f4f1e8", graticule = "#9bb4c6"
        public static let circle = "#1f78b4", polygon = "#e6550d", corridor = "#31a354"
        public static let inside = "#1a9641", outside = "#7a7a7a"
        /// The track's ramp, slow to fast.
        public static let ramp = ["#2c7bb6", "#abd9e9", "#fdae61", "#d7191c"]
        static func event(_ kind: String) -> String {
            switch kind {
            case "enter": "#1a9641"
            case "exit": "#d7191c"
            case "dwell": "#ff7f00"
            case "crossed": "#6a3d9a"
            default: "#333333"
            }
        }
    }

    /// The view this snapshot uses for the content.
    public func view(for content: MapContent) -> MapView {
        if let box {
            return MapView(
                west: box.west, south: box.south, east: box.east, north: box.north, width: width, height: height)
        }
        let overlays = content.overlayCoordinates
        let reference = Self.referenceLongitude(overlays)
        let coordinates = overlays.map { (Self.unwrap($0.longitude, near: reference), $0.latitude) }
        guard let first = coordinates.first else {
            return MapView(west: -180, south: -60, east: 180, north: 75, width: width, height: height)
        }
        var (w, s, e, n) = (first.0, first.1, first.0, first.1)
        for (lon, lat) in coordinates { (w, s, e, n) = (min(w, lon), min(s, lat), max(e, lon), max(n, lat)) }
        // A little room around the data, and at least about 500 m of it.
        let padLat = max((n - s) * 0.06, 0.003)
        let padLon = max((e - w) * 0.06, 0.003 / max(cos(s * .pi / 180), 0.05))
        return MapView(
            west: w - padLon, south: max(s - padLat, -85), east: e + padLon, north: min(n + padLat, 85), width: width,
            height: height)
    }

    /// The SVG document.
    public func svg(_ content: MapContent) -> String {
        let view = view(for: content)
        let centre = (view.west + view.east) / 2
        var svg = SVGWriter(width: width, height: height)
        var labels = LabelPlacer()
        svg.rect(x: 0, y: 0, width: width, height: height, fill: Colors.water)
        drawBasemap(content.basemap, view: view, centre: centre, into: &svg)
        drawGraticule(view: view, into: &svg)
        for condition in content.conditions.sorted(by: { $0.identifier < $1.identifier }) {
            draw(condition, view: view, centre: centre, labels: &labels, into: &svg)
        }
        drawTrack(content.track, view: view, centre: centre, into: &svg)
        for point in content.points {
            let p = view.pixel(
                longitude: Self.unwrap(point.coordinate.longitude, near: centre), latitude: point.coordinate.latitude)
            svg.circle(
                x: p.x, y: p.y, r: 4, fill: point.inside ? Colors.inside : Colors.outside, stroke: "#ffffff",
                strokeWidth: 1)
        }
        for event in content.events {
            let p = view.pixel(
                longitude: Self.unwrap(event.coordinate.longitude, near: centre), latitude: event.coordinate.latitude)
            // A label that would cover another is left out: the mark stays, and its <title> names it.
            let text = "\(event.kind) \(event.identifier)"
            svg.marker(event.kind, x: p.x, y: p.y, color: Colors.event(event.kind), title: text)
            if labels.place(text, x: p.x + 8, y: p.y - 6, size: 11, anchor: "start") {
                svg.text(text, x: p.x + 8, y: p.y - 6, size: 11, anchor: "start", halo: true)
            }
        }
        drawScaleBar(view: view, into: &svg)
        drawLegend(content, into: &svg)
        svg.text(content.attribution, x: width - 6, y: height - 6, size: 10, anchor: "end", halo: true)
        return svg.document
    }

    // MARK: Layers

    func drawBasemap(_ pieces: [[[Coordinate]]], view: MapView, centre: Double, into svg: inout SVGWriter) {
        let visible = view.visible
        for rings in pieces {
            guard let outer = rings.first, !outer.isEmpty else { continue }
            let lons = outer.map(\.longitude)
            let lats = outer.map(\.latitude)
            guard lats.max()! >= visible.south, lats.min()! <= visible.north else { continue }
            // A piece may show once, or again a turn away when the view crosses the antimeridian.
            for shift in [-360.0, 0, 360]
            where lons.max()! + shift >= visible.west && lons.min()! + shift <= visible.east {
                // A hairline of the land's own colour hides the seams between the outlines' tiles.
                svg.path(
                    rings.map { ring in ring.map { view.pixel(longitude: $0.longitude + shift, latitude: $0.latitude) }
                    },
                    fill: Colors.land, stroke: Colors.land, strokeWidth: 0.8)
            }
        }
    }

    func drawGraticule(view: MapView, into svg: inout SVGWriter) {
        let visible = view.visible
        let step = Self.niceStep(
            (visible.east - visible.west) / 5,
            among: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 45])
        var lon = (visible.west / step).rounded(.up) * step
        while lon <= visible.east {
            let x = view.pixel(longitude: lon, latitude: 0).x
            svg.line(from: (x, -10), to: (x, height + 10), stroke: Colors.graticule, width: 0.6, dash: "3 3")
            svg.text(
                Self.degrees(remainder(lon, 360), positive: "E", negative: "W"), x: x + 3, y: 12, size: 10,
                anchor: "start", halo: true)
            lon += step
        }
        let latStep = Self.niceStep(
            (visible.north - visible.south) / 5,
            among: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30])
        var lat = (visible.south / latStep).rounded(.up) * latStep
        while lat <= visible.north {
            let y = view.pixel(longitude: 0, latitude: lat).y
            svg.line(from: (-10, y), to: (width + 10, y), stroke: Colors.graticule, width: 0.6, dash: "3 3")
            svg.text(
                Self.degrees(lat, positive: "N", negative: "S"), x: width - 4, y: y - 3, size: 10, anchor: "end",
                halo: true)
            lat += latStep
        }
    }

    func draw(
        _ condition: MapContent.Condition, view: MapView, centre: Double, labels: inout LabelPlacer,
        into svg: inout SVGWriter
    ) {
        let label: (Double, Double)
        switch condition.geometry {
        case .circle(let center, let radius):
            let ring = GeodesicCircle.outline(center: center, radius: radius)
            let shift = Self.unwrap(center.longitude, near: centre) - center.longitude
            svg.path(
                [ring.map { view.pixel(longitude: $0.longitude + shift, latitude: $0.latitude) }], fill: Colors.circle,
                stroke: Colors.circle,
                fillOpacity: 0.2, title: condition.identifier)
            label = view.pixel(longitude: center.longitude + shift, latitude: center.latitude)
        case .polygon(let parts):
            var rings: [[(x: Double, y: Double)]] = []
            for part in parts {
                let first = part.first?.first?.longitude ?? centre
                let shift = Self.unwrap(first, near: centre) - first
                rings += part.map { ring in
                    Self.unwrapped(ring).map { view.pixel(longitude: $0.longitude + shift, latitude: $0.latitude) }
                }
            }
            svg.path(rings, fill: Colors.polygon, stroke: Colors.polygon, fillOpacity: 0.2, title: condition.identifier)
            let outer = rings.first ?? []
            label =
                outer.isEmpty
                ? (0, 0)
                : (outer.map(\.x).reduce(0, +) / Double(outer.count), outer.map(\.y).reduce(0, +) / Double(outer.count))
        case .corridor(let line, let halfWidth):
            let first = line.first?.longitude ?? centre
            let shift = Self.unwrap(first, near: centre) - first
            let pixels = Self.unwrapped(line).map { view.pixel(longitude: $0.longitude + shift, latitude: $0.latitude) }
            // The band: Mercator is conformal, so a stroke as wide as the corridor at the line's latitude is
            // its buffer, round at the ends and bends.
            let meanLatitude = line.map(\.latitude).reduce(0, +) / Double(max(line.count, 1))
            let band = 2 * halfWidth * view.pixelsPerMetre(atLatitude: meanLatitude)
            svg.polyline(
                pixels, stroke: Colors.corridor, width: max(band, 1), opacity: 0.25, title: condition.identifier)
            svg.polyline(pixels, stroke: Colors.corridor, width: 1.5, opacity: 1, title: nil)
            label = pixels.isEmpty ? (0, 0) : pixels[pixels.count / 2]
        }
        let text = condition.name ?? condition.identifier
        if labels.place(text, x: label.0, y: label.1, size: 12, anchor: "middle") {
            svg.text(text, x: label.0, y: label.1, size: 12, anchor: "middle", halo: true)
        }
    }

    func drawTrack(_ track: [MapContent.TrackPoint], view: MapView, centre: Double, into svg: inout SVGWriter) {
        guard track.count > 1 else { return }
        let speeds = track.compactMap(\.speed)
        let top = max(speeds.max() ?? 1, 0.1)
        var previous = view.pixel(
            longitude: Self.unwrap(track[0].coordinate.longitude, near: centre), latitude: track[0].coordinate.latitude)
        for (a, b) in zip(track, track.dropFirst()) {
            let p = view.pixel(
                longitude: Self.unwrap(b.coordinate.longitude, near: centre), latitude: b.coordinate.latitude)
            let color = a.speed.map { Self.ramp($0 / top) } ?? "#555555"
            svg.line(from: previous, to: p, stroke: color, width: 3, dash: nil)
            previous = p
        }
    }

    func drawScaleBar(view: MapView, into svg: inout SVGWriter) {
        let latitude = view.coordinate(x: width / 2, y: height / 2).latitude
        let perMetre = view.pixelsPerMetre(atLatitude: latitude)
        let metres = Self.niceStep(
            width / 5 / perMetre,
            among: stride(from: -1, through: 7, by: 1).flatMap { k in [1.0, 2, 5].map { $0 * pow(10, Double(k)) } })
        let length = metres * perMetre
        let y = height - 24
        svg.rect(x: 12, y: y - 4, width: length, height: 6, fill: "#333333")
        svg.text(
            metres >= 1000 ? "\(Self.number(metres / 1000)) km" : "\(Self.number(metres)) m", x: 12 + length + 6,
            y: y + 2, size: 11, anchor: "start", halo: true)
    }

    func drawLegend(_ content: MapContent, into svg: inout SVGWriter) {
        var rows: [(String, String)] = []  // (kind, label)
        let kinds = Set(
            content.conditions.map { c -> String in
                switch c.geometry {
                case .circle: "circle"
                case .polygon: "polygon"
                case .corridor: "corridor"
                }
            })
        for kind in ["circle", "polygon", "corridor"] where kinds.contains(kind) { rows.append((kind, kind)) }
        if content.track.count > 1 {
            let top = content.track.compactMap(\.speed).max().map { $0 * 3.6 }
            rows.append(("track", top.map { "track, 0–\(Int($0.rounded(.up))) km/h" } ?? "track"))
        }
        for kind in ["enter", "exit", "dwell", "crossed"] where content.events.contains(where: { $0.kind == kind }) {
            rows.append(("event", kind))
        }
        if content.points.contains(where: \.inside) { rows.append(("inside", "point inside")) }
        if content.points.contains(where: { !$0.inside }) { rows.append(("outside", "point outside")) }
        guard !rows.isEmpty else { return }
        svg.rect(x: 8, y: 20, width: 170, height: Double(rows.count) * 18 + 10, fill: "#ffffff", opacity: 0.85)
        for (i, row) in rows.enumerated() {
            let y = 36 + Double(i) * 18
            switch row.0 {
            case "circle", "polygon", "corridor":
                let color = row.0 == "circle" ? Colors.circle : row.0 == "polygon" ? Colors.polygon : Colors.corridor
                svg.rect(x: 16, y: y - 9, width: 18, height: 12, fill: color, opacity: 0.35)
            case "track":
                for (k, color) in Colors.ramp.enumerated() {
                    svg.rect(x: 16 + Double(k) * 4.5, y: y - 5, width: 4.5, height: 4, fill: color)
                }
            case "event": svg.marker(row.1, x: 25, y: y - 3, color: Colors.event(row.1))
            default:
                svg.circle(
                    x: 25, y: y - 3, r: 4, fill: row.0 == "inside" ? Colors.inside : Colors.outside, stroke: "#ffffff",
                    strokeWidth: 1)
            }
            svg.text(row.1, x: 42, y: y, size: 11, anchor: "start", halo: false)
        }
    }

    // MARK: Helpers

    /// The longitude around which the overlays sit (a circular mean), so that shapes across ±180 stay whole.
    static func referenceLongitude(_ coordinates: [Coordinate]) -> Double {
        guard !coordinates.isEmpty else { return 0 }
        let x = coordinates.map { cos($0.longitude * .pi / 180) }.reduce(0, +)
        let y = coordinates.map { sin($0.longitude * .pi / 180) }.reduce(0, +)
        return atan2(y, x) * 180 / .pi
    }

    /// `longitude` moved by whole turns to within half a turn of `reference`.
    static func unwrap(_ longitude: Double, near reference: Double) -> Double {
        longitude + 360 * ((reference - longitude) / 360).rounded()
    }

    /// A ring or line whose longitudes follow on without a jump of more than half a turn.
    static func unwrapped(_ ring: [Coordinate]) -> [Coordinate] {
        var out: [Coordinate] = []
        out.reserveCapacity(ring.count)
        for c in ring {
            let lon = out.last.map { unwrap(c.longitude, near: $0.longitude) } ?? c.longitude
            out.append(Coordinate(latitude: c.latitude, longitude: lon))
        }
        return out
    }

    static func niceStep(_ target: Double, among steps: [Double]) -> Double {
        steps.last(where: { $0 <= target }) ?? steps[0]
    }

    static func ramp(_ fraction: Double) -> String {
        let f = min(max(fraction, 0), 1)
        return Colors.ramp[min(Int(f * Double(Colors.ramp.count)), Colors.ramp.count - 1)]
    }

    static func degrees(_ value: Double, positive: String, negative: String) -> String {
        "\(number(abs(value)))°\(value < 0 ? negative : value > 0 ? positive : "")"
    }

    /// A number with no more decimals than it needs (up to three), the same on every machine.
    static func number(_ value: Double) -> String {
        var text = String(format: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

/// Where labels already are, so that a new one does not cover them (widths estimated from the font size).
struct LabelPlacer {
    private var boxes: [(x0: Double, y0: Double, x1: Double, y1: Double)] = []

    /// Whether the label fits without covering another; if so it is taken.
    mutating func place(_ text: String, x: Double, y: Double, size: Double, anchor: String) -> Bool {
        let width = Double(text.count) * size * 0.6
        let x0 = anchor == "middle" ? x - width / 2 : anchor == "end" ? x - width : x
        let box = (x0: x0, y0: y - size, x1: x0 + width, y1: y + size * 0.3)
        guard !boxes.contains(where: { $0.x0 < box.x1 && box.x0 < $0.x1 && $0.y0 < box.y1 && box.y0 < $0.y1 }) else {
            return false
        }
        boxes.append(box)
        return true
    }
}
