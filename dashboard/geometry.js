// Geofence shapes as MapKit draws its overlays, in [latitude, longitude] pairs for Leaflet.
// Pure: no DOM, no map, no network. The same rules as `geofence-agent map` (Sources/Maps):
// - a circle is its true geodesic outline, every point at the radius along the WGS84 ellipsoid;
// - a polygon keeps its holes, and one across the antimeridian stays whole (longitudes unwrapped);
// - a corridor is its line, drawn with a stroke as wide as the band (Web Mercator is conformal).
(function (exports) {
  'use strict';

  const A = 6378137.0;
  const F = 1 / 298.257223563;
  const B = A * (1 - F);
  const RAD = Math.PI / 180;
  // Web Mercator's equator in metres, and Leaflet's 256-pixel tiles.
  const EQUATOR = 2 * Math.PI * A;

  /** The point `distance` metres from (lat, lon) at initial bearing `bearing` degrees along the WGS84
   *  ellipsoid (Vincenty's direct formula). The longitude is not wrapped: lon + the change. */
  function destination(lat, lon, bearing, distance) {
    const phi = Math.max(-89.999999, Math.min(89.999999, lat)) * RAD;
    const alpha1 = bearing * RAD;
    const sinAlpha1 = Math.sin(alpha1);
    const cosAlpha1 = Math.cos(alpha1);
    const tanU1 = (1 - F) * Math.tan(phi);
    const cosU1 = 1 / Math.sqrt(1 + tanU1 * tanU1);
    const sinU1 = tanU1 * cosU1;
    const sigma1 = Math.atan2(tanU1, cosAlpha1);
    const sinAlpha = cosU1 * sinAlpha1;
    const cos2Alpha = 1 - sinAlpha * sinAlpha;
    const u2 = cos2Alpha * (A * A - B * B) / (B * B);
    const a = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)));
    const b = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)));
    let sigma = distance / (B * a);
    let cos2SigmaM = 0;
    let sinSigma = 0;
    let cosSigma = 1;
    for (let i = 0; i < 200; i++) {
      cos2SigmaM = Math.cos(2 * sigma1 + sigma);
      sinSigma = Math.sin(sigma);
      cosSigma = Math.cos(sigma);
      const deltaSigma = b * sinSigma * (cos2SigmaM + b / 4 * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM) -
        b / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)));
      const next = distance / (B * a) + deltaSigma;
      const done = Math.abs(next - sigma) < 1e-12;
      sigma = next;
      if (done) break;
    }
    cos2SigmaM = Math.cos(2 * sigma1 + sigma);
    sinSigma = Math.sin(sigma);
    cosSigma = Math.cos(sigma);
    const x = sinU1 * sinSigma - cosU1 * cosSigma * cosAlpha1;
    const lat2 = Math.atan2(sinU1 * cosSigma + cosU1 * sinSigma * cosAlpha1, (1 - F) * Math.sqrt(sinAlpha * sinAlpha + x * x));
    const lambda = Math.atan2(sinSigma * sinAlpha1, cosU1 * cosSigma - sinU1 * sinSigma * cosAlpha1);
    const c = F / 16 * cos2Alpha * (4 + F * (4 - 3 * cos2Alpha));
    const l = lambda - (1 - c) * F * sinAlpha * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)));
    return [lat2 / RAD, lon + l / RAD];
  }

  /** A circle's geodesic outline: `count` points at exactly `radius` metres from the centre. */
  function circle(lat, lon, radius, count = 96) {
    const points = [];
    for (let k = 0; k < count; k++) points.push(destination(lat, lon, k * 360 / count, radius));
    return points;
  }

  /** Longitudes made continuous along a list of [lat, lon], starting near `reference` when given, so
   *  that a shape across the antimeridian is drawn whole rather than around the world. */
  function unwrapped(points, reference) {
    const out = [];
    let previous = reference;
    for (const [lat, lon] of points) {
      const shifted = previous === undefined ? lon : lon + 360 * Math.round((previous - lon) / 360);
      out.push([lat, shifted]);
      previous = shifted;
    }
    return out;
  }

  /** Metres on the ground per screen pixel at a latitude and a Leaflet zoom level. */
  function metresPerPixel(latitude, zoom) {
    return EQUATOR * Math.cos(latitude * RAD) / (256 * Math.pow(2, zoom));
  }

  /** The stroke width in pixels that draws a corridor of half-width `width` metres at a latitude. */
  function corridorWeight(width, latitude, zoom) {
    return Math.max(2 * width / metresPerPixel(latitude, zoom), 1);
  }

  function checkPosition(position, path) {
    if (!Array.isArray(position) || position.length < 2) return `${path}: a position is [longitude, latitude]`;
    const [lon, lat] = position;
    if (typeof lon !== 'number' || !Number.isFinite(lon) || lon < -180 || lon > 180) return `${path}[0]: longitude ${lon} is outside [-180, 180]`;
    if (typeof lat !== 'number' || !Number.isFinite(lat) || lat < -90 || lat > 90) return `${path}[1]: latitude ${lat} is outside [-90, 90]`;
    return null;
  }

  function checkPositions(list, path, minimum) {
    if (!Array.isArray(list) || list.length < minimum) return `${path}: needs at least ${minimum} positions`;
    for (let i = 0; i < list.length; i++) {
      const problem = checkPosition(list[i], `${path}[${i}]`);
      if (problem) return problem;
    }
    return null;
  }

  function ringsOf(polygon, path, reference) {
    if (!Array.isArray(polygon) || polygon.length === 0) return { problem: `${path}: a polygon needs its outer ring` };
    const rings = [];
    for (let r = 0; r < polygon.length; r++) {
      const problem = checkPositions(polygon[r], `${path}[${r}]`, 4);
      if (problem) return { problem };
      const ring = unwrapped(polygon[r].map(([lon, lat]) => [lat, lon]), r === 0 ? reference : rings[0][0][1]);
      rings.push(ring);
    }
    return { rings };
  }

  /** What to draw for a geofence's GeoJSON Feature: a circle, polygons or a corridor, or the problem
   *  that keeps it from being drawn, with its path in the Feature. The vehicle validates definitions
   *  fully (and reports refusals on `errors`); this only checks what drawing needs. */
  function shapeOf(feature) {
    if (!feature || typeof feature !== 'object' || feature.type !== 'Feature') return { problem: 'not a GeoJSON Feature' };
    const geometry = feature.geometry;
    const properties = feature.properties || {};
    if (!geometry || typeof geometry !== 'object') return { problem: 'geometry: missing' };
    const coordinates = geometry.coordinates;
    switch (geometry.type) {
      case 'Point': {
        const problem = checkPosition(coordinates, 'geometry.coordinates');
        if (problem) return { problem };
        const radius = properties.radius;
        if (typeof radius !== 'number' || !(radius > 0) || radius > 20000000) return { problem: `properties.radius: ${radius} is not a radius in metres` };
        const [lon, lat] = coordinates;
        // The outline is worked out when first drawn: ten thousand of them at once cost a second.
        let outline = null;
        return { kind: 'circle', center: [lat, lon], radius, get outline() { return outline || (outline = circle(lat, lon, radius)); } };
      }
      case 'Polygon': {
        const { rings, problem } = ringsOf(coordinates, 'geometry.coordinates');
        return problem ? { problem } : { kind: 'polygon', polygons: [rings] };
      }
      case 'MultiPolygon': {
        if (!Array.isArray(coordinates) || coordinates.length === 0) return { problem: 'geometry.coordinates: no polygons' };
        const polygons = [];
        for (let p = 0; p < coordinates.length; p++) {
          // Pieces split at ±180 (RFC 7946) are moved beside the first, so that they meet.
          const { rings, problem } = ringsOf(coordinates[p], `geometry.coordinates[${p}]`, polygons.length ? polygons[0][0][0][1] : undefined);
          if (problem) return { problem };
          polygons.push(rings);
        }
        return { kind: 'polygon', polygons };
      }
      case 'LineString': {
        const problem = checkPositions(coordinates, 'geometry.coordinates', 2);
        if (problem) return { problem };
        const width = properties.width;
        if (typeof width !== 'number' || !(width > 0) || width > 100000) return { problem: `properties.width: ${width} is not a half-width in metres` };
        const line = unwrapped(coordinates.map(([lon, lat]) => [lat, lon]));
        const latitude = line.reduce((sum, p) => sum + p[0], 0) / line.length;
        return { kind: 'corridor', line, width, latitude };
      }
      default:
        return { problem: `geometry.type: ${String(geometry.type).slice(0, 40)} is not drawn (Point, Polygon, MultiPolygon or LineString)` };
    }
  }

  /** Web Mercator as Leaflet's EPSG:3857 projects, scaled to the unit square: [x, y] with x east from
   *  −180° and y south from 85.05°N; pixels at zoom z are these times 256·2^z. */
  function mercator(lat, lon) {
    const s = Math.sin(Math.max(-85.0511287798, Math.min(85.0511287798, lat)) * RAD);
    return [lon / 360 + 0.5, 0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)];
  }

  exports.GeofenceGeometry = { destination, circle, unwrapped, metresPerPixel, corridorWeight, shapeOf, mercator };
})(typeof window !== 'undefined' ? window : globalThis);
