// The page: MQTT over WebSockets in (MQTT.js), the fleet model (fleet.js), the map and lists out.
// Settings come from settings.json beside the page (deploy/), then from the address, which wins:
// ?fleet=demo&prefix=fleet&broker=wss://host:port&tiles=https://tiles.example/{z}/{x}/{y}.png
// By default the page talks to the broker that served it (mosquitto's WebSocket listener serves both),
// for every fleet, on Natural Earth's offline outlines. docs/map.md describes the page.
(async function () {
  'use strict';

  const { CanvasLayer, FenceDrawing, VehicleDrawing } = FleetLayers;
  const { mercator } = GeofenceGeometry;
  const settings = await loadSettings();
  const COLOURS = { inside: '#ff9500', outside: '#007aff', unknown: '#8e8e93', other: '#af52de', refused: '#ff3b30' };
  const PRESENCE_COLOURS = { online: '#007aff', silent: '#ff3b30', offline: '#8e8e93', unknown: '#8e8e93' };
  const model = new FleetModel({ prefix: settings.prefix, historyMinutes: Math.max(60, settings.historyMinutes) });
  const $ = (id) => document.getElementById(id);
  let selected = null;     // the vehicle whose state colours the geofences
  let followData = true;   // fit the view to the data until the user moves the map
  const filter = { search: '', state: '', geofence: '' };
  $('fleet-name').textContent = `${settings.prefix}/${settings.fleet === '+' ? '*' : settings.fleet}`;

  async function loadSettings() {
    let file = {};
    try {
      const response = await fetch('settings.json', { cache: 'no-store' });
      if (response.ok) file = await response.json();
    } catch (error) {
      console.warn(`settings.json not read (${error.message}); the defaults and the address apply`);
    }
    const params = new URLSearchParams(location.search);
    const given = (key) => typeof file[key] === 'string' || typeof file[key] === 'number';
    const pick = (key, fallback) => params.get(key) || (given(key) ? String(file[key]) : fallback);
    return {
      broker: pick('broker', `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`),
      prefix: pick('prefix', 'fleet'),
      fleet: pick('fleet', '+'),
      username: params.get('username'), password: params.get('password'),
      // A street map: an XYZ tile server's URL template and the attribution its licence asks for.
      tiles: pick('tiles', ''),
      tilesAttribution: pick('tilesAttribution', ''),
      tilesMaxZoom: Number(pick('tilesMaxZoom', '19')) || 19,
      historyMinutes: Number(pick('historyMinutes', '15')) || 15,
      view: pick('view', ''),
    };
  }

  // The map. No zoom animation: the canvases are drawn for each zoom level instead of being scaled.
  const map = L.map('map', {
    worldCopyJump: true, zoomSnap: 0.25, zoomAnimation: false, fadeAnimation: false, markerZoomAnimation: false,
  }).setView([30, 0], 2);
  map.attributionControl.setPrefix('<a href="https://leafletjs.com">Leaflet</a>');
  for (const [pane, z] of [['basemap', 150], ['fences', 400], ['vehicles', 600]]) map.createPane(pane).style.zIndex = z;

  // Base maps: Natural Earth's outlines and lakes (offline, the default), or a configured street map.
  const naturalEarth = L.layerGroup([], { attribution: 'Natural Earth' });
  fetch('basemap.geojson')
    .then((response) => (response.ok
      ? response.json()
      : Promise.reject(new Error(`basemap.geojson: HTTP ${response.status}`))))
    .then((data) => {
      L.geoJSON(data, {
        pane: 'basemap', renderer: L.canvas({ pane: 'basemap', padding: 0.5 }), interactive: false,
        style: (f) => (f.properties && f.properties.water
          ? { color: '#9dbfdc', weight: 0.6, fillColor: '#cfe2f3', fillOpacity: 1 }
          : { color: '#b8b2a5', weight: 0.7, fillColor: '#f2efe6', fillOpacity: 1 }),
      }).addTo(naturalEarth);
      document.body.dataset.basemap = 'loaded';
      document.body.dataset.lakes = String(data.features.filter((f) => f.properties && f.properties.water).length);
    })
    .catch((error) => {
      document.body.dataset.basemap = 'missing';
      console.warn(`no basemap (${error.message}); run scripts/setup`);
    });
  const bases = { 'Natural Earth (offline)': naturalEarth };
  let streets = null;
  if (settings.tiles) {
    streets = L.tileLayer(settings.tiles, {
      attribution: settings.tilesAttribution, maxZoom: settings.tilesMaxZoom, pane: 'tilePane',
    });
    streets.on('tileload', () => { document.body.dataset.tiles = 'loaded'; });
    streets.on('tileerror', (e) => console.warn(`tile not loaded: ${e.tile && e.tile.src}`));
    bases['Street map'] = streets;
  }
  (streets || naturalEarth).addTo(map);
  L.control.layers(bases, null, { position: 'topright' }).addTo(map);

  map.on('dragstart', () => { followData = false; });
  map.getContainer().addEventListener('wheel', () => { followData = false; }, { passive: true });
  const FitControl = L.Control.extend({
    onAdd() {
      const button = L.DomUtil.create('button', 'leaflet-bar');
      button.textContent = 'Fit';
      button.title = 'Fit the view to the geofences and vehicles';
      button.style.padding = '0.3em 0.6em';
      L.DomEvent.on(button, 'click', (e) => { L.DomEvent.stop(e); followData = true; fitToData(); });
      return button;
    },
  });
  new FitControl({ position: 'topleft' }).addTo(map);
  if (settings.view) {
    const [lat, lon, zoom] = settings.view.split(',').map(Number);
    if ([lat, lon, zoom].every(Number.isFinite)) { followData = false; map.setView([lat, lon], zoom); }
  }

  function fitToData() {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const f of fences.fences.values()) {
      x0 = Math.min(x0, f.box[0]); y0 = Math.min(y0, f.box[1]);
      x1 = Math.max(x1, f.box[2]); y1 = Math.max(y1, f.box[3]);
    }
    for (const d of drawList.values()) {
      x0 = Math.min(x0, d.mx); y0 = Math.min(y0, d.my); x1 = Math.max(x1, d.mx); y1 = Math.max(y1, d.my);
    }
    if (!(x0 <= x1)) return;
    const corner = (x, y) => map.unproject([x * 256, y * 256], 0);
    map.fitBounds(L.latLngBounds(corner(x0, y1), corner(x1, y0)).pad(0.15), { maxZoom: 17, animate: false });
  }
  let fitTimer = null;
  function fitSoon() {
    if (!followData || fitTimer) return;
    fitTimer = setTimeout(() => { fitTimer = null; if (followData) fitToData(); }, 300);
  }

  // Geofences: one canvas. `stateLog` keeps each geofence's last 20 states as painted, for a reader of the page.
  const fences = new FenceDrawing();
  const stateLog = {};
  let drawnFences = 0;
  const drawFences = (ctx, view) => { drawnFences = fences.draw(ctx, view, COLOURS); };
  const fenceLayer = new CanvasLayer(drawFences, { pane: 'fences' }).addTo(map);

  function paintGeofence(key) {
    const g = model.geofences.get(key);
    const f = fences.fences.get(key);
    if (!g || !f) return false;
    const state = model.geofenceState(g, selected);
    if (f.state === state && stateLog[key]) return false;
    f.state = state;
    const log = (stateLog[key] ||= []);
    log.push(state);
    if (log.length > 20) log.shift(); // the recent states only: selecting vehicles for hours adds up
    return true;
  }

  function paintGeofences(keys = fences.fences.keys()) {
    let changed = false;
    for (const key of keys) changed = paintGeofence(key) || changed;
    if (changed) fenceLayer.redraw();
  }

  function geofenceChanged(change) {
    fences.fences.delete(change.key);
    delete stateLog[change.key];
    const g = model.geofences.get(change.key);
    if (g && g.shape) {
      fences.set(change.key, g.shape);
      paintGeofence(change.key);
    }
    fenceLayer.redraw();
    listSoon(true);
    fitSoon();
  }

  function showGeofence(key) {
    const f = fences.fences.get(key);
    if (!f) return;
    followData = false;
    const corner = (x, y) => map.unproject([x * 256, y * 256], 0);
    map.fitBounds(L.latLngBounds(corner(f.box[0], f.box[3]), corner(f.box[2], f.box[1])).pad(0.3), { maxZoom: 18 });
  }

  // Vehicles: one canvas; `drawList` holds what each vehicle's dot needs, `moved` when its last move
  // arrived (performance.now()), until the frame that draws it.
  const vehicleDrawing = new VehicleDrawing();
  const drawList = new Map();
  const moved = new Map();
  let shown = new Set();   // the vehicles that pass the filters
  let trail = null;        // the selected vehicle's stretch, in the unit square
  const vehicleLayer = new CanvasLayer((ctx, view) => {
    const list = [];
    for (const key of shown) { const d = drawList.get(key); if (d) list.push(d); }
    vehicleDrawing.draw(ctx, view, list, trail);
    const now = performance.now();
    for (const since of moved.values()) metrics.sample('moveMs', now - since);
    moved.clear();
  }, { pane: 'vehicles', padding: 0.1 }).addTo(map);

  function vehicleChanged(key) {
    const v = model.vehicles.get(key);
    if (!selected) select(key);
    if (v.location) {
      let d = drawList.get(key);
      if (!d) {
        d = { key, label: settings.fleet === '+' ? v.key : v.vehicle, selected: key === selected };
        drawList.set(key, d);
        if (model.matches(v, filter)) shown.add(key);
        fitSoon();
      }
      [d.mx, d.my] = mercator(v.location.lat, v.location.lon);
      d.accuracy = (v.location.accuracy || 0) / (40075016.686 * Math.cos(v.location.lat * Math.PI / 180));
      d.colour = PRESENCE_COLOURS[model.presence(v)];
      moved.set(key, performance.now());
      vehicleLayer.redraw();
      if (key === selected) historySoon();
    }
    listSoon();
  }

  function refilter() {
    shown = new Set();
    for (const v of model.vehicles.values()) {
      const d = drawList.get(v.key);
      if (d) d.colour = PRESENCE_COLOURS[model.presence(v)];
      if (d && model.matches(v, filter)) shown.add(v.key);
    }
    vehicleLayer.redraw();
    listVehicles();
  }

  function select(key) {
    if (selected && drawList.get(selected)) drawList.get(selected).selected = false;
    selected = key;
    if (drawList.get(key)) drawList.get(key).selected = true;
    paintGeofences();
    vehicleLayer.redraw();
    listSoon(true);
    historySoon(true);
  }

  map.on('click', (e) => {
    const view = vehicleLayer.view;
    const hit = vehicleDrawing.at(e.layerPoint.x - view.topLeft.x, e.layerPoint.y - view.topLeft.y);
    if (hit && hit.vehicle) { select(hit.vehicle); return; }
    if (hit && hit.cluster) { map.setView(e.latlng, Math.min(map.getZoom() + 2, 18)); return; }
    const [mx, my] = mercator(e.latlng.lat, e.latlng.lng);
    const under = fences.at(mx, my, 4 / view.scale);
    if (!under.length) return;
    const g = model.geofences.get(under[0].key);
    L.popup().setLatLng(e.latlng)
      .setContent(`${escape(g.id)}${g.name ? ` · ${escape(g.name)}` : ''}`
        + `${g.vehicle ? ` (${escape(g.vehicle)} only)` : ''}<br>${under[0].state}`)
      .openOn(map);
  });

  function escape(text) {
    return String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
  }

  // Lists: redrawn at most twice a second, the vehicles' only the rows in view, the geofences' only when a
  // geofence, a refusal or the selected vehicle's state changed (sorting ten thousand costs).
  let listTimer = null;
  let geofencesChanged = true;
  function listSoon(geofences = false) {
    geofencesChanged ||= geofences;
    if (listTimer) return;
    listTimer = setTimeout(() => {
      listTimer = null;
      listVehicles();
      if (geofencesChanged) listGeofences();
      geofencesChanged = false;
    }, 500);
  }

  const ROW = 22;
  function listVehicles() {
    const keys = [...shown].sort();
    const box = $('vehicle-list');
    const first = Math.max(0, Math.floor(box.scrollTop / ROW) - 5);
    const last = Math.min(keys.length, first + Math.ceil(box.clientHeight / ROW) + 10);
    const rows = [pad(first * ROW)];
    for (const key of keys.slice(first, last)) rows.push(vehicleRow(model.vehicles.get(key)));
    rows.push(pad((keys.length - last) * ROW));
    document.querySelector('#vehicles tbody').replaceChildren(...rows);
    const total = model.vehicles.size;
    $('vehicle-count').textContent = keys.length === total ? String(total) : `${keys.length} of ${total}`;
  }

  function pad(height) {
    const tr = document.createElement('tr');
    tr.className = 'pad';
    tr.style.height = `${height}px`;
    return tr;
  }

  function vehicleRow(v) {
    const tr = document.createElement('tr');
    tr.dataset.vehicle = v.key;
    if (v.key === selected) tr.className = 'selected';
    const presence = model.presence(v);
    const s = v.status || {};
    const { gps, outbox } = statusCells(s);
    const name = settings.fleet === '+' ? v.key : v.vehicle;
    const cells = [name, presence, gps, outbox, model.insideOf(v).sort().join(', ')];
    cells.forEach((text, i) => {
      const td = document.createElement('td');
      td.textContent = text;
      if (i === 1) { td.className = 'presence'; td.dataset.presence = presence; }
      tr.append(td);
    });
    tr.title = s.broker ? `broker: ${s.broker}${s.place && s.place.locality ? `; near ${s.place.locality}` : ''}` : '';
    tr.addEventListener('click', () => {
      select(v.key);
      if (v.location) { followData = false; map.panTo([v.location.lat, v.location.lon]); }
    });
    return tr;
  }
  $('vehicle-list').addEventListener('scroll', () => requestAnimationFrame(listVehicles), { passive: true });
  const FILTERS = [['vehicle-search', 'search'], ['vehicle-state', 'state'], ['vehicle-geofence', 'geofence']];
  for (const [id, key] of FILTERS) {
    $(id).addEventListener('input', () => { filter[key] = $(id).value.trim(); refilter(); });
  }

  const GEOFENCE_ROWS = 300;
  function listGeofences() {
    const search = $('geofence-search').value.trim().toLowerCase();
    const all = [...model.geofences.values()];
    const found = (g) => !search || g.key.toLowerCase().includes(search) || g.name.toLowerCase().includes(search);
    const matching = all.filter(found);
    const order = (a, b) => (a.problem ? 0 : 1) - (b.problem ? 0 : 1) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
    const items = matching.sort(order).slice(0, GEOFENCE_ROWS);
    const list = $('geofences');
    list.replaceChildren(...items.map(geofenceItem));
    if (matching.length > items.length) {
      const more = document.createElement('li');
      more.className = 'more';
      more.textContent = `${matching.length - items.length} more: search to narrow`;
      list.append(more);
    }
    const drawn = fences.fences.size;
    $('geofence-count').textContent = `${drawn} drawn${all.length > drawn ? `, ${all.length - drawn} not` : ''}`;
  }

  function geofenceItem(g) {
    const li = document.createElement('li');
    li.dataset.geofence = g.key;
    if (g.problem) {
      li.className = 'problem';
      li.textContent = `${g.id}: not drawn, ${g.problem}`;
      return li;
    }
    const state = model.geofenceState(g, selected);
    const swatch = document.createElement('span');
    swatch.className = `swatch ${state}`;
    const scope = document.createElement('span');
    scope.className = 'scope';
    const monitor = g.monitor !== 'default' ? `, monitor ${g.monitor}` : '';
    scope.textContent = ` ${g.shape.kind}${g.vehicle ? `, ${g.vehicle} only` : ''}${monitor}`;
    li.append(swatch, `${g.id}${g.name ? ` · ${g.name}` : ''}`, scope);
    for (const [vehicle, reason] of Object.entries(g.refusedBy)) {
      const refusal = document.createElement('div');
      refusal.className = 'refusal';
      refusal.textContent = `refused by ${vehicle}: ${reason}`;
      li.append(refusal);
    }
    li.dataset.state = state;
    li.addEventListener('click', () => showGeofence(g.key));
    return li;
  }
  $('geofence-search').addEventListener('input', listGeofences);

  // Times: in UTC with the date, and named for the clock they come from.
  function stamp(time, clock) {
    const el = document.createElement('time');
    el.className = 'time';
    if (time) el.dateTime = time;
    el.textContent = time ? `${time.replace('T', ' ').replace(/(\.\d+)?Z$/, '')} UTC` : 'no time';
    el.title = clock === 'gps'
      ? "the vehicle's GPS time of the fix that caused the event"
      : 'the time the vehicle received what it refused (its own clock)';
    const label = document.createElement('span');
    label.className = 'clock';
    label.textContent = clock === 'gps' ? ' GPS ' : ' received ';
    return [el, label];
  }

  // The feed, newest first.
  const VERBS = {
    enter: 'entered', exit: 'left', dwell: 'dwelt in', crossed: 'crossed', overspeed: 'over the limit in',
    overspeedEnded: 'back under the limit in', active: 'schedule opened:', inactive: 'schedule closed:',
  };
  function near(place) {
    if (!place || !place.locality) return '';
    const where = [place.locality, place.administrativeArea, place.isoCountryCode].filter(Boolean).join(', ');
    return place.distance < 1000 ? ` · at ${where}` : ` · ${(place.distance / 1000).toFixed(1)} km from ${where}`;
  }

  function feedItem(entry) {
    const li = document.createElement('li');
    if (entry.kind === 'event') {
      Object.assign(li.dataset, {
        eventId: entry.eventId || '', vehicle: entry.vehicleKey, identifier: entry.identifier, event: entry.event,
        time: entry.time || '',
      });
      const what = document.createElement('span');
      what.className = 'what';
      what.textContent = `${VERBS[entry.event] || entry.event} ${entry.name || entry.identifier}`;
      const place = document.createElement('span');
      place.className = 'place';
      const reason = entry.reason ? `, ${entry.reason}` : '';
      place.textContent = `${entry.name ? ` (${entry.identifier})` : ''}${reason}${near(entry.place)}`;
      li.append(...stamp(entry.time, 'gps'), `${entry.vehicle} `, what, place);
      if (entry.lat !== null) {
        li.addEventListener('click', () => {
          followData = false;
          map.setView([entry.lat, entry.lon], Math.max(map.getZoom(), 15));
        });
      }
    } else {
      li.className = 'error';
      Object.assign(li.dataset, { vehicle: entry.vehicleKey, error: entry.errorKind, time: entry.time || '' });
      const what = `${entry.vehicle} refused ${entry.errorKind} ${entry.topic}: ${entry.reason}`;
      li.append(...stamp(entry.time, 'received'), what);
    }
    return li;
  }

  function feedChanged() {
    const list = $('events');
    list.prepend(feedItem(model.feed[0]));
    while (list.children.length > model.feedLength) list.lastElementChild.remove();
  }

  // History: the selected vehicle's trail over the last N minutes, and its events of that stretch.
  let historyTimer = null;
  function historySoon(now = false) {
    if (now) { clearTimeout(historyTimer); historyTimer = null; showHistory(); return; }
    if (!historyTimer) historyTimer = setTimeout(() => { historyTimer = null; showHistory(); }, 1000);
  }

  function showHistory() {
    const section = $('history');
    if (!selected) { section.hidden = true; trail = null; return; }
    const minutes = Number($('history-minutes').value) || settings.historyMinutes;
    const stretch = model.stretch(selected, minutes);
    section.hidden = false;
    $('history-vehicle').textContent = selected;
    trail = new Float64Array(stretch.points.length * 2);
    stretch.points.forEach(([lat, lon], i) => { [trail[2 * i], trail[2 * i + 1]] = mercator(lat, lon); });
    const iso = (t) => (t === null ? null : new Date(t).toISOString());
    const summary = $('history-summary');
    summary.replaceChildren(stretch.points.length
      ? `${stretch.points.length} fixes, ${stretch.events.length} events, GPS time `
      : 'no fixes yet');
    if (stretch.points.length) {
      summary.append(stamp(iso(stretch.from), 'gps')[0], ' to ', stamp(iso(stretch.to), 'gps')[0]);
    }
    section.dataset.points = String(stretch.points.length);
    $('history-events').replaceChildren(...stretch.events.map(feedItem));
    vehicleLayer.redraw();
  }
  $('history-minutes').value = String(settings.historyMinutes);
  $('history-minutes').addEventListener('change', () => historySoon(true));

  // What the page does with its messages: counts, and samples of how long things took.
  const metrics = {
    handled: 0, since: performance.now(), samples: { moveMs: [], lagMs: [] },
    sample(kind, value) {
      const list = this.samples[kind];
      if (list.length >= 20000) list.splice(0, 10000);
      list.push(value);
    },
  };
  function summary(values) {
    const at = (p) => percentile(values, p);
    return { n: values.length, p50: at(0.5), p95: at(0.95), max: at(1) };
  }
  function percentile(values, p) {
    if (!values.length) return null;
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  }

  // MQTT.
  let client = null;
  let connectedBefore = false;
  function setConnection(state, text) {
    const badge = $('connection');
    badge.dataset.state = state;
    badge.textContent = text;
  }

  function handle(topic, payload) {
    metrics.handled += 1;
    const change = model.receive(topic, payload);
    if (!change) return;
    switch (change.kind) {
      case 'geofence': geofenceChanged(change); break;
      case 'vehicle': {
        vehicleChanged(change.key);
        // How old the newest fix is when it is handled: a backlog shows as a growing age.
        const v = model.vehicles.get(change.key);
        if (v.location && v.location.time) metrics.sample('lagMs', Date.now() - Date.parse(v.location.time));
        break;
      }
      case 'state':
        vehicleChanged(change.key);
        if (change.key === selected) { paintGeofences(); listSoon(true); }
        break;
      case 'feed':
        feedChanged();
        if (!model.vehicles.get(change.key).location) listSoon();
        if (change.geofence) { paintGeofences([change.geofence]); listSoon(true); }
        if (change.key === selected) historySoon();
        break;
    }
  }

  function connect(username, password) {
    if (client) client.end(true);
    setConnection('connecting', `connecting to ${settings.broker}`);
    client = mqtt.connect(settings.broker, {
      protocolVersion: 5, clean: true, reconnectPeriod: 3000, connectTimeout: 10000,
      clientId: `dashboard-${Math.random().toString(16).slice(2, 10)}`,
      username: username || undefined, password: password || undefined,
    });
    client.on('connect', () => {
      setConnection('connected', `connected to ${settings.broker}`);
      $('sign-in').hidden = true;
      if (connectedBefore) {
        // Retained geofences come again; one deleted while away must not stay drawn.
        for (const key of model.clearGeofences()) geofenceChanged({ kind: 'geofence', key });
      }
      connectedBefore = true;
      client.subscribe(model.subscriptions(settings.fleet), { qos: 1 }, (error, granted) => {
        const refused = (granted || []).filter((g) => g.qos >= 128).map((g) => g.topic);
        if (error || refused.length) {
          setConnection('refused', `not allowed to read ${refused.join(', ') || error.message}`);
        }
      });
    });
    client.on('message', (topic, payload) => handle(topic, payload.toString()));
    client.on('reconnect', () => setConnection('connecting', `reconnecting to ${settings.broker}`));
    client.on('offline', () => setConnection('connecting', `${settings.broker} unreachable, retrying`));
    client.on('error', (error) => {
      // Refused credentials: ask for them instead of retrying with the same ones.
      if (/auth|refused/i.test(error.message)) {
        setConnection('refused', error.message);
        client.end(true);
        $('sign-in').hidden = false;
      } else {
        setConnection('error', error.message);
      }
    });
  }

  $('sign-in').addEventListener('submit', (e) => {
    e.preventDefault();
    connect($('username').value, $('password').value);
  });

  // A vehicle that stops sending turns silent without a message: presence is looked at every 5 s.
  setInterval(refilter, 5000);

  connect(settings.username, settings.password);

  // For a reader of the page's state (and the browser tests and benchmark): what is drawn and known.
  window.dashboard = {
    model, map, settings, stateLog, filter,
    get connected() { return client !== null && client.connected; },
    get selected() { return selected; },
    select,
    drawnGeofences() { return [...fences.fences.keys()]; },
    geofenceState(key) { const f = fences.fences.get(key); return f ? f.state : null; },
    vehicleMarker(key) {
      const v = model.vehicles.get(key);
      return v && v.location && drawList.has(key) ? { lat: v.location.lat, lng: v.location.lon } : null;
    },
    vehiclePresence(key) { const v = model.vehicles.get(key); return v ? model.presence(v) : null; },
    drawnVehicles() { return [...vehicleDrawing.drawn.keys()]; },
    clusters() { return vehicleDrawing.clusters.map((c) => c.n); },
    setFilter(next) {
      Object.assign(filter, next);
      for (const [id, key] of FILTERS) $(id).value = filter[key];
      refilter();
    },
    metrics() {
      const seconds = (performance.now() - metrics.since) / 1000;
      const { moveMs, lagMs } = metrics.samples;
      return {
        handled: metrics.handled, perSecond: metrics.handled / seconds, seconds, vehicles: model.vehicles.size,
        geofences: fences.fences.size, drawnFences,
        drawnVehicles: vehicleDrawing.drawn.size, clusters: vehicleDrawing.clusters.length,
        moveMs: summary(moveMs), lagMs: summary(lagMs),
      };
    },
    resetMetrics() {
      metrics.handled = 0;
      metrics.since = performance.now();
      metrics.samples = { moveMs: [], lagMs: [] };
    },
  };
})();
