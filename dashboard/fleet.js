// The fleet as the dashboard knows it, built from MQTT messages (docs/topics.md). Pure: topics and
// payload text in, a description of what changed out; the page draws it (dashboard.js).
(function (exports) {
  'use strict';

  const VEHICLE_TOPICS = ['location', 'track', 'status', 'state', 'events', 'errors'];
  /** The track's columns (docs/topics.md#track). */
  const TRACK_COLUMNS = ['t', 'lat', 'lon', 'acc', 'speed', 'course'];

  /** A track column's values: the first as sent, then a step that each next value changes. */
  function decodeColumn(coded) {
    const values = [coded[0]];
    let step = 0;
    for (let i = 1; i < coded.length; i++) {
      step += coded[i];
      values.push(values[i - 1] + step);
    }
    return values;
  }

  /** A `track` payload read back (docs/topics.md#track): { sequence, vehicle, points }, each point in the
   *  payload's integers ({ t, lat, lon, acc, speed, course, stationary, excursion }); null when the payload
   *  is not a track. Checked against the agent's own encoder's vectors (Tests/Vectors/fleet-contract.json). */
  function decodeTrack(text) {
    const o = parseJSON(text);
    if (!o) return null;
    const columns = TRACK_COLUMNS.map((key) => o[key]);
    const length = Array.isArray(columns[0]) ? columns[0].length : 0;
    const whole = (c) => Array.isArray(c) && c.length === length && c.every((n) => Number.isInteger(n));
    if (length === 0 || !columns.every(whole)) return null;
    const stationary = new Set(Array.isArray(o.stationary) ? o.stationary : []);
    const excursion = new Set(Array.isArray(o.excursion) ? o.excursion : []);
    const [t, lat, lon, acc, speed, course] = columns.map(decodeColumn);
    const points = t.map((_, i) => ({
      t: t[i], lat: lat[i], lon: lon[i], acc: acc[i], speed: speed[i], course: course[i],
      stationary: stationary.has(i), excursion: excursion.has(i),
    }));
    return { sequence: typeof o.sequence === 'number' ? o.sequence : null, vehicle: o.vehicle, points };
  }

  function parseJSON(text) {
    try {
      const value = JSON.parse(text);
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;
    } catch (_) {
      return null;
    }
  }

  function finite(value) {
    return typeof value === 'number' && Number.isFinite(value) ? value : null;
  }

  class FleetModel {
    /** `prefix` is the agents' `mqtt.topicPrefix`; a trail keeps the last `trailLength` positions of a
     *  vehicle, its history the fixes of the last `historyMinutes` (by their GPS time), the feed the newest
     *  `feedLength` events and errors, and each vehicle its own last `vehicleEvents` events. */
    constructor({ prefix = 'fleet', trailLength = 60, feedLength = 200, historyMinutes = 60, vehicleEvents = 200 } = {}) {
      this.prefix = prefix;
      this.prefixLevels = prefix.split('/').length;
      this.trailLength = trailLength;
      this.feedLength = feedLength;
      this.historyMillis = historyMinutes * 60000;
      this.vehicleEvents = vehicleEvents;
      /** "FLEET/VEHICLE" → { key, fleet, vehicle, location, trail, status, state, lastStatusAt } */
      this.vehicles = new Map();
      /** "FLEET/ID" (fleet-wide) or "FLEET/VEHICLE/ID" (one vehicle's) → { key, fleet, vehicle, id,
       *  monitor, name, feature, shape, problem } */
      this.geofences = new Map();
      /** Newest first: { kind: 'event' | 'error', ... } */
      this.feed = [];
      this.seenEvents = new Set();
      this.messages = 0;
      this.ignored = 0;
    }

    /** The subscriptions that feed the model, for one fleet or every fleet (`+`). */
    subscriptions(fleet = '+') {
      const p = `${this.prefix}/${fleet}`;
      return [`${p}/geofences/+`, `${p}/vehicles/+/geofences/+`].concat(VEHICLE_TOPICS.map((t) => `${p}/vehicles/+/${t}`));
    }

    /** What a topic is about, or null for a topic the dashboard does not read. */
    parse(topic) {
      const levels = topic.split('/');
      if (levels.slice(0, this.prefixLevels).join('/') !== this.prefix) return null;
      const [fleet, ...rest] = levels.slice(this.prefixLevels);
      if (!fleet) return null;
      if (rest.length === 2 && rest[0] === 'geofences' && rest[1]) return { kind: 'geofence', fleet, vehicle: null, id: rest[1] };
      if (rest[0] !== 'vehicles' || !rest[1]) return null;
      const vehicle = rest[1];
      if (rest.length === 4 && rest[2] === 'geofences' && rest[3]) return { kind: 'geofence', fleet, vehicle, id: rest[3] };
      if (rest.length === 3 && VEHICLE_TOPICS.includes(rest[2])) return { kind: rest[2], fleet, vehicle };
      return null;
    }

    /** Takes one message. Returns { kind, key } for what changed, or null when nothing did (a topic not
     *  read, a payload that is not what the topic carries, an event already seen). */
    receive(topic, text, now = Date.now()) {
      this.messages += 1;
      const about = this.parse(topic);
      const change = about ? this[`take_${about.kind}`](about, text, now) : null;
      if (!change) this.ignored += 1;
      // Whatever a vehicle sends shows it is there (a parked one sends a status every 15 minutes).
      else if (about.vehicle && about.kind !== 'geofence' && this.vehicles.has(`${about.fleet}/${about.vehicle}`)) {
        this.vehicles.get(`${about.fleet}/${about.vehicle}`).lastHeardAt = now;
      }
      return change;
    }

    vehicle(fleet, vehicle) {
      const key = `${fleet}/${vehicle}`;
      let v = this.vehicles.get(key);
      if (!v) {
        v = {
          key, fleet, vehicle, location: null, trail: [], status: null, state: null, lastStatusAt: null, lastHeardAt: null,
          lastSequence: -1, history: { t: [], lat: [], lon: [], start: 0 }, events: [],
        };
        this.vehicles.set(key, v);
      }
      return v;
    }

    take_geofence({ fleet, vehicle, id }, text) {
      const key = vehicle === null ? `${fleet}/${id}` : `${fleet}/${vehicle}/${id}`;
      if (text.length === 0) {
        // An empty retained payload deletes the geofence.
        return this.geofences.delete(key) ? { kind: 'geofence', key, removed: true } : null;
      }
      const feature = parseJSON(text);
      const properties = (feature && typeof feature.properties === 'object' && feature.properties) || {};
      let shape = feature ? GeofenceGeometry.shapeOf(feature) : { problem: 'the payload is not a JSON object' };
      if (!shape.problem && feature.id !== undefined && feature.id !== id) {
        shape = { problem: `id: "${String(feature.id).slice(0, 40)}" is not the topic's "${id}"` };
      }
      this.geofences.set(key, {
        key, fleet, vehicle, id,
        monitor: typeof properties.monitor === 'string' ? properties.monitor : 'default',
        name: typeof properties.name === 'string' ? properties.name : '',
        feature,
        shape: shape.problem ? null : shape,
        problem: shape.problem || null,
        // "FLEET/VEHICLE" → the reason a vehicle refused this version (its `errors` topic).
        refusedBy: {},
      });
      return { kind: 'geofence', key, removed: false };
    }

    take_location({ fleet, vehicle }, text) {
      const o = parseJSON(text);
      const l = o && o.location;
      if (!l || finite(l.lat) === null || finite(l.lon) === null) return null;
      const v = this.vehicle(fleet, vehicle);
      // The retained copy arrives again after a reconnect: a sequence already shown changes nothing.
      if (typeof o.sequence === 'number' && o.sequence <= v.lastSequence) return null;
      if (typeof o.sequence === 'number') v.lastSequence = o.sequence;
      v.location = {
        lat: l.lat, lon: l.lon,
        accuracy: finite(l.horizontalAccuracy) !== null && l.horizontalAccuracy > 0 ? l.horizontalAccuracy : null,
        speed: finite(l.speed), course: finite(l.course),
        time: o.time || null, gpsTime: l.gpsTime || null,
        isStationary: o.isStationary === true,
        place: o.place || null,
      };
      this.extendTrail(v, l.lat, l.lon);
      this.record(v, Date.parse(l.gpsTime || o.time || ''), l.lat, l.lon);
      return { kind: 'vehicle', key: v.key };
    }

    extendTrail(v, lat, lon) {
      const last = v.trail[v.trail.length - 1];
      if (!last || last[0] !== lat || last[1] !== lon) v.trail.push([lat, lon]);
      if (v.trail.length > this.trailLength) v.trail.splice(0, v.trail.length - this.trailLength);
    }

    /** Keeps a fix in the vehicle's history, the oldest dropped once older than the window. Columns of
     *  small integers (tenths of a second since the vehicle's first fix, millionths of a degree): V8 keeps
     *  those in 4 bytes each, 12 bytes a fix, 43 MB for a thousand vehicles' hour at 1 Hz. */
    record(v, time, lat, lon) {
      if (!Number.isFinite(time)) return;
      const h = v.history;
      if (h.t0 === undefined) h.t0 = time;
      const t = Math.round((time - h.t0) / 100);
      const n = h.t.length;
      if (t < 0 || (n > h.start && t < h.t[n - 1])) return; // an older fix (a retained copy) is not history
      h.t.push(t); h.lat.push(Math.round(lat * 1e6)); h.lon.push(Math.round(lon * 1e6));
      while (h.t[h.start] < t - this.historyMillis / 100) h.start += 1;
      if (h.start > 1024) { h.t.splice(0, h.start); h.lat.splice(0, h.start); h.lon.splice(0, h.start); h.start = 0; }
    }

    /** A vehicle's stretch: its fixes of the `minutes` before its newest one, as [lat, lon], and its
     *  events of that stretch, newest first; `from` and `to` in milliseconds since the epoch. */
    stretch(key, minutes) {
      const v = this.vehicles.get(key);
      const h = v && v.history;
      if (!h || h.t.length === h.start) return { from: null, to: null, points: [], events: [] };
      const n = h.t.length;
      const last = h.t[n - 1];
      const first = last - minutes * 600;
      const points = [];
      for (let i = n - 1; i >= h.start && h.t[i] >= first; i--) points.push([h.lat[i] / 1e6, h.lon[i] / 1e6]);
      points.reverse();
      const [from, to] = [h.t0 + first * 100, h.t0 + last * 100];
      const events = v.events.filter((e) => { const t = Date.parse(e.time || ''); return t >= from && t <= to; });
      return { from, to, points, events };
    }

    /** A batch of live updates (docs/topics.md#track): columns of integers, each its changes' changes. */
    take_track({ fleet, vehicle }, text) {
      const track = decodeTrack(text);
      if (!track) return null;
      const v = this.vehicle(fleet, vehicle);
      if (track.sequence !== null && track.sequence <= v.lastSequence) return null;
      if (track.sequence !== null) v.lastSequence = track.sequence;
      let point = null;
      for (const p of track.points) {
        // Fixes the agent's motion check found pulled aside by multipath: not drawn, as they were no evidence.
        if (p.excursion) continue;
        point = {
          lat: p.lat / 1e6, lon: p.lon / 1e6, accuracy: p.acc, speed: p.speed, course: p.course,
          stationary: p.stationary ? 1 : 0, time: new Date(p.t * 100).toISOString(),
        };
        this.extendTrail(v, point.lat, point.lon);
        this.record(v, p.t * 100, point.lat, point.lon);
      }
      if (!point) return null;
      v.location = {
        lat: point.lat, lon: point.lon,
        accuracy: point.accuracy > 0 ? point.accuracy : null,
        speed: point.speed >= 0 ? point.speed / 10 : null, course: point.course >= 0 ? point.course : null,
        time: point.time, gpsTime: point.time, isStationary: point.stationary === 1,
        // The track names no place: the last one heard stays.
        place: v.location ? v.location.place : null,
      };
      return { kind: 'vehicle', key: v.key };
    }

    take_status({ fleet, vehicle }, text, now = Date.now()) {
      const o = parseJSON(text);
      if (!o || (o.status !== 'online' && o.status !== 'offline')) return null;
      const v = this.vehicle(fleet, vehicle);
      v.status = o;
      v.lastStatusAt = now;
      return { kind: 'vehicle', key: v.key };
    }

    take_state({ fleet, vehicle }, text) {
      const o = parseJSON(text);
      if (!o || typeof o.monitors !== 'object' || o.monitors === null) return null;
      const v = this.vehicle(fleet, vehicle);
      v.state = o;
      return { kind: 'state', key: v.key };
    }

    take_events({ fleet, vehicle }, text) {
      const o = parseJSON(text);
      if (!o || typeof o.event !== 'string' || typeof o.identifier !== 'string') return null;
      // Delivery is at least once: an eventId seen before is the same event again.
      if (typeof o.eventId === 'string') {
        if (this.seenEvents.has(o.eventId)) return null;
        this.seenEvents.add(o.eventId);
      }
      const v = this.vehicle(fleet, vehicle);
      const location = o.location || {};
      const entry = {
        kind: 'event', vehicleKey: v.key, vehicle, eventId: o.eventId || null, sequence: o.sequence,
        event: o.event, identifier: o.identifier, name: o.name || '', state: o.state || '', reason: o.reason || null,
        // The vehicle's GPS time of the fix that caused it (the agent's clock when the fix had none).
        time: location.gpsTime || o.time || null, lat: finite(location.lat), lon: finite(location.lon), place: o.place || null,
      };
      this.push(entry);
      v.events.unshift(entry);
      if (v.events.length > this.vehicleEvents) v.events.length = this.vehicleEvents;
      return { kind: 'feed', key: v.key };
    }

    take_errors({ fleet, vehicle }, text) {
      const o = parseJSON(text);
      if (!o || typeof o.reason !== 'string') return null;
      const v = this.vehicle(fleet, vehicle);
      // The time the vehicle received what it refused (its own clock), not a GPS time.
      this.push({ kind: 'error', vehicleKey: v.key, vehicle, errorKind: o.kind || '', topic: o.topic || '', reason: o.reason, time: o.time || null });
      // A refused geofence keeps the refusal until its next version: the vehicle holds the previous one, or none.
      const about = o.kind === 'geofence' && typeof o.topic === 'string' ? this.parse(o.topic) : null;
      const geofence = about && about.kind === 'geofence' &&
        this.geofences.get(about.vehicle === null ? `${about.fleet}/${about.id}` : `${about.fleet}/${about.vehicle}/${about.id}`);
      if (geofence) {
        geofence.refusedBy[v.key] = o.reason;
        return { kind: 'feed', key: v.key, geofence: geofence.key };
      }
      return { kind: 'feed', key: v.key };
    }

    push(entry) {
      this.feed.unshift(entry);
      if (this.feed.length > this.feedLength) {
        for (const dropped of this.feed.splice(this.feedLength)) if (dropped.eventId) this.seenEvents.delete(dropped.eventId);
      }
    }

    /** Forgets every geofence: after a reconnect the broker sends the retained ones again, and one
     *  deleted meanwhile must not stay drawn. */
    clearGeofences() {
      const keys = [...this.geofences.keys()];
      this.geofences.clear();
      return keys;
    }

    /** Whether a vehicle passes the page's filters: `search` in its name, a `state` ('online', 'silent',
     *  'offline', 'moving', 'stationary', 'inside': inside any geofence) and a `geofence` it is inside
     *  (an identifier, or a part of one). */
    matches(v, { search = '', state = '', geofence = '' } = {}, now = Date.now()) {
      if (search && !v.key.toLowerCase().includes(search.toLowerCase())) return false;
      if (state) {
        const presence = this.presence(v, now);
        if (['online', 'silent', 'offline'].includes(state) && presence !== state) return false;
        if (state === 'moving' && (!v.location || v.location.isStationary)) return false;
        if (state === 'stationary' && (!v.location || !v.location.isStationary)) return false;
        if (state === 'inside' && this.insideOf(v).length === 0) return false;
      }
      if (geofence && !this.insideOf(v).some((id) => id.includes(geofence))) return false;
      return true;
    }

    /** The identifiers of the geofences a vehicle's last state says it is inside. */
    insideOf(v) {
      const ids = [];
      for (const monitor of Object.values((v.state && v.state.monitors) || {})) ids.push(...Object.keys((monitor && monitor.inside) || {}));
      return ids;
    }

    /** Whether a vehicle is online: its last status says so, and it was heard (any message) within
     *  twice the status's heartbeat and 15 s (the agent sends a status at least that often while
     *  connected; 10 s when the status does not say). */
    presence(v, now = Date.now()) {
      if (!v.status) return 'unknown';
      if (v.status.status === 'offline') return 'offline';
      const heartbeat = finite(v.status.heartbeatSeconds) || 10;
      const heard = Math.max(v.lastStatusAt || 0, v.lastHeardAt || 0);
      return now - heard > heartbeat * 2000 + 15000 ? 'silent' : 'online';
    }

    /** A geofence's state for a vehicle: 'inside', 'outside', 'unknown' (not decided yet, or no state
     *  heard), 'refused' (the vehicle refused this version), or 'other' (it belongs to another vehicle or
     *  fleet). */
    geofenceState(geofence, vehicleKey) {
      const v = vehicleKey ? this.vehicles.get(vehicleKey) : null;
      if (!v) return 'unknown';
      if (geofence.fleet !== v.fleet || (geofence.vehicle !== null && geofence.vehicle !== v.vehicle)) return 'other';
      if (geofence.refusedBy[v.key]) return 'refused';
      const monitor = v.state && v.state.monitors[geofence.monitor];
      if (!monitor) return 'unknown';
      if (monitor.inside && Object.prototype.hasOwnProperty.call(monitor.inside, geofence.id)) return 'inside';
      if (Array.isArray(monitor.unknownConditions) && monitor.unknownConditions.includes(geofence.id)) return 'unknown';
      return 'outside';
    }
  }

  /** What the vehicle list shows of a status: its GPS state and the fix's age, and the outbox's rows. What a
   *  status does not say (an offline will, a status from an older agent) shows as missing, never as
   *  "undefined". */
  function statusCells(status) {
    const s = status || {};
    const missing = '\u2014';
    const gps = s.gps && typeof s.gps.state === 'string' ? s.gps.state : missing;
    const age = gps !== missing && s.gps && Number.isFinite(s.gps.fixAgeSeconds)
      ? ` ${s.gps.fixAgeSeconds.toFixed(1)} s` : '';
    const rows = s.outbox && Number.isFinite(s.outbox.rows) ? String(s.outbox.rows) : missing;
    return { gps: gps + age, outbox: rows };
  }

  exports.FleetModel = FleetModel;
  exports.decodeTrack = decodeTrack;
  exports.statusCells = statusCells;
})(typeof window !== 'undefined' ? window : globalThis);
