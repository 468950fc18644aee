// The map's two busy layers, each one canvas: the geofences (ten thousand) and the vehicles (thousands,
// each moving every second). Leaflet draws a vector layer per object, which is what slows traccar-web
// down at a few hundred devices; here each layer is one canvas drawn in one pass over typed arrays.
(function (exports) {
  'use strict';

  const { mercator, circle } = GeofenceGeometry;

  /** A canvas in one of the map's panes, padded by half a screen on each side: while the map is dragged
   *  the pane carries it along, and it is drawn again when the move ends or when `redraw` is asked for
   *  (at most once a frame). `draw(ctx, view)` draws; `view.x(mx)` and `view.y(my)` turn Web Mercator in
   *  the unit square (GeofenceGeometry.mercator) into the canvas's pixels. */
  const CanvasLayer = L.Layer.extend({
    options: { pane: 'overlayPane', padding: 0.5 },

    initialize(draw, options) {
      this._draw = draw;
      L.setOptions(this, options);
    },

    onAdd(map) {
      this._canvas = L.DomUtil.create('canvas', 'fleet-canvas');
      Object.assign(this._canvas.style, { position: 'absolute', pointerEvents: 'none' });
      this.getPane().appendChild(this._canvas);
      map.on('moveend resize', this._reset, this);
      this._reset();
    },

    onRemove(map) {
      map.off('moveend resize', this._reset, this);
      if (this._frame) L.Util.cancelAnimFrame(this._frame);
      this._frame = null;
      L.DomUtil.remove(this._canvas);
    },

    _reset() {
      const map = this._map;
      const size = map.getSize();
      const pad = size.multiplyBy(this.options.padding).round();
      const topLeft = map.containerPointToLayerPoint(pad.multiplyBy(-1)).round();
      L.DomUtil.setPosition(this._canvas, topLeft);
      const width = size.x + 2 * pad.x;
      const height = size.y + 2 * pad.y;
      if (this._canvas.width !== width || this._canvas.height !== height) {
        this._canvas.width = width;
        this._canvas.height = height;
      }
      const scale = 256 * Math.pow(2, map.getZoom());
      const origin = map.getPixelOrigin();
      const ox = origin.x + topLeft.x;
      const oy = origin.y + topLeft.y;
      this.view = {
        width, height, scale, zoom: map.getZoom(), ox, oy, topLeft,
        x: (mx) => mx * scale - ox,
        y: (my) => my * scale - oy,
      };
      this.redraw(true);
    },

    /** Draws again: now, or in the next frame (several asks in one frame draw once). */
    redraw(now = false) {
      if (!this._map) return;
      if (now) {
        if (this._frame) L.Util.cancelAnimFrame(this._frame);
        this._frame = null;
        this._render();
      } else if (!this._frame) {
        this._frame = L.Util.requestAnimFrame(() => { this._frame = null; this._render(); });
      }
    },

    _render() {
      const ctx = this._canvas.getContext('2d');
      ctx.clearRect(0, 0, this.view.width, this.view.height);
      this._draw(ctx, this.view);
    },
  });

  /** The geofences as drawn: each one's Web Mercator shape and box, worked out once when it arrives. */
  class FenceDrawing {
    constructor() {
      /** key → { shape, box: [x0, y0, x1, y1], state, colour } */
      this.fences = new Map();
    }

    set(key, shape) {
      const f = { key, kind: shape.kind, state: 'unknown' };
      if (shape.kind === 'circle') {
        const [lat, lon] = shape.center;
        [f.cx, f.cy] = mercator(lat, lon);
        // Web Mercator is conformal: a small circle stays a circle, of radius r / (2πR cos φ) in the unit square.
        f.r = shape.radius / (40075016.686 * Math.cos(lat * Math.PI / 180));
        // A large one is drawn by its geodesic outline, which Mercator no longer keeps round.
        if (shape.radius > 2000) f.rings = [this.ring(circle(lat, lon, shape.radius))];
        f.box = [f.cx - f.r, f.cy - f.r, f.cx + f.r, f.cy + f.r];
      } else if (shape.kind === 'polygon') {
        f.rings = shape.polygons.flatMap((rings) => rings.map((ring) => this.ring(ring)));
        f.box = this.boxOf(f.rings);
      } else {
        f.line = this.ring(shape.line);
        // Half the band in the unit square, at the line's mean latitude.
        f.halfWidth = shape.width / (40075016.686 * Math.cos(shape.latitude * Math.PI / 180));
        const b = this.boxOf([f.line]);
        f.box = [b[0] - f.halfWidth, b[1] - f.halfWidth, b[2] + f.halfWidth, b[3] + f.halfWidth];
      }
      this.fences.set(key, f);
      return f;
    }

    ring(points) {
      const xy = new Float64Array(points.length * 2);
      points.forEach(([lat, lon], i) => { [xy[2 * i], xy[2 * i + 1]] = mercator(lat, lon); });
      return xy;
    }

    boxOf(rings) {
      const box = [Infinity, Infinity, -Infinity, -Infinity];
      for (const xy of rings) {
        for (let i = 0; i < xy.length; i += 2) {
          box[0] = Math.min(box[0], xy[i]); box[1] = Math.min(box[1], xy[i + 1]);
          box[2] = Math.max(box[2], xy[i]); box[3] = Math.max(box[3], xy[i + 1]);
        }
      }
      return box;
    }

    /** Draws every geofence in view, one path per colour: a geofence under 3 pixels is a dot. */
    draw(ctx, view, colours) {
      const byColour = new Map();
      const x0 = view.ox / view.scale, y0 = view.oy / view.scale;
      const x1 = (view.ox + view.width) / view.scale, y1 = (view.oy + view.height) / view.scale;
      for (const f of this.fences.values()) {
        const b = f.box;
        if (b[2] < x0 || b[0] > x1 || b[3] < y0 || b[1] > y1) continue;
        let list = byColour.get(f.state);
        if (!list) byColour.set(f.state, (list = []));
        list.push(f);
      }
      let drawn = 0;
      for (const [state, list] of byColour) {
        const colour = colours[state];
        ctx.strokeStyle = colour;
        ctx.fillStyle = colour;
        const dots = new Path2D();
        const shapes = new Path2D();
        const bands = [];
        for (const f of list) {
          drawn += 1;
          const size = (f.box[2] - f.box[0]) * view.scale;
          if (size < 3) {
            const x = Math.round(view.x((f.box[0] + f.box[2]) / 2));
            const y = Math.round(view.y((f.box[1] + f.box[3]) / 2));
            dots.rect(x - 1, y - 1, 3, 3);
          } else if (f.kind === 'corridor') {
            bands.push(f);
          } else if (f.rings) {
            for (const xy of f.rings) {
              shapes.moveTo(view.x(xy[0]), view.y(xy[1]));
              for (let i = 2; i < xy.length; i += 2) shapes.lineTo(view.x(xy[i]), view.y(xy[i + 1]));
              shapes.closePath();
            }
          } else {
            const cx = view.x(f.cx), cy = view.y(f.cy);
            shapes.moveTo(cx + f.r * view.scale, cy);
            shapes.arc(cx, cy, f.r * view.scale, 0, 2 * Math.PI);
          }
        }
        ctx.globalAlpha = state === 'inside' ? 0.35 : 0.15;
        ctx.fill(shapes, 'evenodd');
        ctx.globalAlpha = 1;
        ctx.lineWidth = 1.5;
        ctx.setLineDash(state === 'refused' ? [6, 4] : []);
        ctx.stroke(shapes);
        ctx.setLineDash([]);
        ctx.fill(dots);
        for (const f of bands) this.drawBand(ctx, view, f);
      }
      return drawn;
    }

    /** A corridor: a round-capped stroke as wide as the band, and its line dashed on it. */
    drawBand(ctx, view, f) {
      const line = new Path2D();
      line.moveTo(view.x(f.line[0]), view.y(f.line[1]));
      for (let i = 2; i < f.line.length; i += 2) line.lineTo(view.x(f.line[i]), view.y(f.line[i + 1]));
      const width = Math.max(2 * f.halfWidth * view.scale, 1);
      Object.assign(ctx, { lineCap: 'round', lineJoin: 'round', globalAlpha: 0.35, lineWidth: width });
      ctx.stroke(line);
      Object.assign(ctx, { globalAlpha: 1, lineWidth: 1.5 });
      ctx.setLineDash([4, 4]);
      ctx.stroke(line);
      ctx.setLineDash([]);
    }

    /** The geofences under a point of the unit square, smallest first. */
    at(mx, my, tolerance) {
      const hits = [];
      for (const f of this.fences.values()) {
        const b = f.box;
        if (mx < b[0] - tolerance || mx > b[2] + tolerance || my < b[1] - tolerance || my > b[3] + tolerance) continue;
        if (f.kind === 'circle' && !f.rings && Math.hypot(mx - f.cx, my - f.cy) > f.r + tolerance) continue;
        if (f.rings && !f.rings.some((xy) => inside(xy, mx, my)) && (b[2] - b[0]) > tolerance) continue;
        hits.push(f);
      }
      return hits.sort((a, b) => (a.box[2] - a.box[0]) - (b.box[2] - b.box[0]));
    }
  }

  function inside(xy, x, y) {
    let c = false;
    for (let i = 0, j = xy.length - 2; i < xy.length; j = i, i += 2) {
      const crosses = (xy[i + 1] > y) !== (xy[j + 1] > y);
      if (crosses && x < (xy[j] - xy[i]) * (y - xy[i + 1]) / (xy[j + 1] - xy[i + 1]) + xy[i]) c = !c;
    }
    return c;
  }

  /** The vehicles as drawn: one dot each, or, where they crowd (below `clusterZoom`), one disc per cell
   *  of `cell` pixels with their count. The selected vehicle is always a dot, with its label, its
   *  accuracy and its history. */
  class VehicleDrawing {
    constructor({ clusterZoom = 12, cell = 44 } = {}) {
      this.clusterZoom = clusterZoom;
      this.cell = cell;
      /** What the last frame drew: key → [canvas x, canvas y], and the clusters. */
      this.drawn = new Map();
      this.clusters = [];
    }

    /** `vehicles`: [{ key, label, mx, my, colour, selected, accuracy (unit square) }]. `trail`: the
     *  selected vehicle's history in the unit square, as [mx, my, ...]. */
    draw(ctx, view, vehicles, trail) {
      this.drawn = new Map();
      this.clusters = [];
      if (trail && trail.length >= 4) {
        ctx.beginPath();
        ctx.moveTo(view.x(trail[0]), view.y(trail[1]));
        for (let i = 2; i < trail.length; i += 2) ctx.lineTo(view.x(trail[i]), view.y(trail[i + 1]));
        Object.assign(ctx, { strokeStyle: '#1c1c1e', globalAlpha: 0.7, lineWidth: 2.5, lineJoin: 'round' });
        ctx.stroke();
        ctx.globalAlpha = 1;
      }
      const cluster = view.zoom < this.clusterZoom && vehicles.length > 1;
      const cells = new Map();
      const single = [];
      for (const v of vehicles) {
        const x = view.x(v.mx), y = view.y(v.my);
        if (x < -20 || y < -20 || x > view.width + 20 || y > view.height + 20) continue;
        if (!cluster || v.selected) { single.push([v, x, y]); continue; }
        const id = Math.floor(x / this.cell) * 100003 + Math.floor(y / this.cell);
        let c = cells.get(id);
        if (!c) cells.set(id, (c = { n: 0, x: 0, y: 0, first: null, firstX: 0, firstY: 0 }));
        if (c.n === 0) { c.first = v; c.firstX = x; c.firstY = y; }
        c.n += 1; c.x += x; c.y += y;
      }
      for (const c of cells.values()) {
        if (c.n === 1) { single.push([c.first, c.firstX, c.firstY]); continue; }
        const x = c.x / c.n, y = c.y / c.n;
        const r = 9 + 3 * Math.log10(c.n) * 2;
        ctx.beginPath();
        ctx.arc(x, y, r, 0, 2 * Math.PI);
        Object.assign(ctx, { fillStyle: 'rgba(0, 122, 255, 0.75)', strokeStyle: '#fff', lineWidth: 2 });
        ctx.fill();
        ctx.stroke();
        Object.assign(ctx, {
          fillStyle: '#fff', font: '600 11px system-ui, sans-serif', textAlign: 'center', textBaseline: 'middle',
        });
        ctx.fillText(String(c.n), x, y);
        this.clusters.push({ x, y, r, n: c.n });
      }
      // Dots, one path per colour; the selected one last, on top.
      const byColour = new Map();
      let selected = null;
      for (const entry of single) {
        this.drawn.set(entry[0].key, [entry[1], entry[2]]);
        if (entry[0].selected) { selected = entry; continue; }
        let path = byColour.get(entry[0].colour);
        if (!path) byColour.set(entry[0].colour, (path = new Path2D()));
        path.moveTo(entry[1] + 6, entry[2]);
        path.arc(entry[1], entry[2], 6, 0, 2 * Math.PI);
      }
      Object.assign(ctx, { strokeStyle: '#fff', lineWidth: 2 });
      for (const [colour, path] of byColour) {
        ctx.fillStyle = colour;
        ctx.fill(path);
        ctx.stroke(path);
      }
      const labels = single.length <= 60 ? single : selected ? [selected] : [];
      if (selected) {
        const [v, x, y] = selected;
        if (v.accuracy * view.scale > 7) {
          ctx.beginPath();
          ctx.arc(x, y, v.accuracy * view.scale, 0, 2 * Math.PI);
          Object.assign(ctx, { fillStyle: 'rgba(0, 122, 255, 0.1)', strokeStyle: '#007aff', lineWidth: 1 });
          ctx.fill();
          ctx.stroke();
        }
        ctx.beginPath();
        ctx.arc(x, y, 8, 0, 2 * Math.PI);
        Object.assign(ctx, { fillStyle: v.colour, strokeStyle: '#1c1c1e', lineWidth: 3 });
        ctx.fill();
        ctx.stroke();
      }
      Object.assign(ctx, {
        font: '600 12px system-ui, sans-serif', textAlign: 'left', textBaseline: 'middle',
        lineWidth: 3, strokeStyle: '#fff', fillStyle: '#1c1c1e',
      });
      for (const [v, x, y] of labels) {
        ctx.strokeText(v.label, x + 10, y);
        ctx.fillText(v.label, x + 10, y);
      }
      return single.length;
    }

    /** The vehicle drawn nearest a canvas point within `radius` pixels, or the cluster there. */
    at(x, y, radius = 10) {
      let best = null;
      let distance = radius;
      for (const [key, [vx, vy]] of this.drawn) {
        const d = Math.hypot(vx - x, vy - y);
        if (d <= distance) { best = key; distance = d; }
      }
      if (best) return { vehicle: best };
      const c = this.clusters.find((c) => Math.hypot(c.x - x, c.y - y) <= c.r);
      return c ? { cluster: c } : null;
    }
  }

  exports.FleetLayers = { CanvasLayer, FenceDrawing, VehicleDrawing };
})(window);
