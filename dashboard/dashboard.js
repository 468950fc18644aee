// The page: MQTT over WebSockets in (MQTT.js), the fleet model (fleet.js), Leaflet and lists out.
// Settings come from the address: ?fleet=demo&prefix=fleet&broker=wss://host:port. By default the page
// talks to the broker that served it (mosquitto's WebSocket listener serves both), for every fleet.
(function () {
  'use strict';

  const params = new URLSearchParams(location.search);
  const settings = {
    broker: params.get('broker') || `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/`,
    prefix: params.get('prefix') || 'fleet',
    fleet: params.get('fleet') || '+',
  };
  const COLOURS = { inside: '#ff9500', outside: '#007aff', unknown: '#8e8e93', other: '#af52de', refused: '#ff3b30' };
  const model = new FleetModel({ prefix: settings.prefix });
  const layers = new Map();       // geofence key → Leaflet layer
  const vehicleLayers = new Map(); // vehicle key → { marker, accuracy, trail }
  let selected = null;             // the vehicle whose state colours the geofences
  let followData = true;           // fit the view to the data until the user moves the map
  const $ = (id) => document.getElementById(id);
  $('fleet-name').textContent = settings.fleet === '+' ? `${settings.prefix}/*` : `${settings.prefix}/${settings.fleet}`;

  // The map: Natural Earth's outlines on water, under everything else.
  const map = L.map('map', { worldCopyJump: true, zoomSnap: 0.25 }).setView([30, 0], 2);
  map.createPane('basemap').style.zIndex = 250;
  map.attributionControl.setPrefix('<a href="https://leafletjs.com">Leaflet</a>');
  map.attributionControl.addAttribution('Natural Earth');
  fetch('basemap.geojson')
    .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`basemap.geojson: HTTP ${response.status}`))))
    .then((data) => {
      L.geoJSON(data, {
        pane: 'basemap', renderer: L.canvas({ pane: 'basemap', padding: 0.5 }), interactive: false,
        style: { color: '#b8b2a5', weight: 0.7, fillColor: '#f2efe6', fillOpacity: 1 },
      }).addTo(map);
      document.body.dataset.basemap = 'loaded';
    })
    .catch((error) => {
      document.body.dataset.basemap = 'missing';
      console.warn(`no basemap (${error.message}); run scripts/setup`);
    });
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

  function fitToData() {
    const bounds = L.latLngBounds([]);
    for (const layer of layers.values()) if (layer.getBounds) bounds.extend(layer.getBounds());
    for (const v of vehicleLayers.values()) bounds.extend(v.marker.getLatLng());
    if (bounds.isValid()) map.fitBounds(bounds.pad(0.15), { maxZoom: 17, animate: false });
  }
  let fitTimer = null;
  function fitSoon() {
    if (!followData || fitTimer) return;
    fitTimer = setTimeout(() => { fitTimer = null; if (followData) fitToData(); }, 300);
  }

  // Geofences.
  function tag(layer, key) {
    // The page's state for a reader (and the tests): each drawn path names its geofence and state.
    layer.eachLayer ? layer.eachLayer((l) => tag(l, key)) : layer.getElement() && (layer.getElement().dataset.geofence = key);
  }

  function drawGeofence(g) {
    const style = { color: COLOURS.unknown, weight: 2, fillOpacity: 0.2 };
    const title = `${g.id}${g.name ? ` · ${g.name}` : ''}${g.vehicle ? ` (${g.vehicle} only)` : ''}`;
    let layer;
    if (g.shape.kind === 'circle') {
      // Every point of the geodesic outline kept (Leaflet would simplify a small circle into a polygon).
      layer = L.polygon(g.shape.outline, { ...style, smoothFactor: 0 });
    } else if (g.shape.kind === 'polygon') {
      layer = L.polygon(g.shape.polygons, style);
    } else {
      // The band: a round-capped stroke as wide as the corridor, sized again at each zoom; the line on it.
      const band = L.polyline(g.shape.line, { ...style, opacity: 0.35, lineCap: 'round', lineJoin: 'round', weight: 1 });
      const line = L.polyline(g.shape.line, { color: COLOURS.unknown, weight: 1.5, dashArray: '4 4', interactive: false });
      layer = L.featureGroup([band, line]);
      layer.corridor = { band, line, width: g.shape.width, latitude: g.shape.latitude };
    }
    layer.bindTooltip(title, { sticky: true });
    layer.on('click', () => showGeofence(g.key));
    layer.addTo(map);
    if (layer.corridor) {
      sizeCorridor(layer);
      layer.corridor.band.getElement().dataset.geofence = g.key;
      layer.corridor.line.getElement().dataset.geofenceLine = g.key;
    } else {
      tag(layer, g.key);
    }
    return layer;
  }

  function sizeCorridor(layer) {
    const c = layer.corridor;
    c.band.setStyle({ weight: GeofenceGeometry.corridorWeight(c.width, c.latitude, map.getZoom()) });
  }
  map.on('zoomend', () => { for (const layer of layers.values()) if (layer.corridor) sizeCorridor(layer); });

  function paintGeofence(key) {
    const g = model.geofences.get(key);
    const layer = layers.get(key);
    if (!g || !layer) return;
    const state = model.geofenceState(g, selected);
    const colour = COLOURS[state];
    if (layer.corridor) {
      layer.corridor.band.setStyle({ color: colour });
      layer.corridor.line.setStyle({ color: colour });
      layer.corridor.band.getElement().dataset.state = state;
    } else {
      layer.setStyle({ color: colour, fillColor: colour, fillOpacity: state === 'inside' ? 0.35 : 0.15, dashArray: state === 'refused' ? '6 4' : null });
      layer.getElement().dataset.state = state;
    }
  }

  function geofenceChanged(change) {
    const old = layers.get(change.key);
    if (old) {
      map.removeLayer(old);
      layers.delete(change.key);
    }
    const g = model.geofences.get(change.key);
    if (g && g.shape) {
      layers.set(change.key, drawGeofence(g));
      paintGeofence(change.key);
    }
    listGeofences();
    fitSoon();
  }

  function showGeofence(key) {
    const layer = layers.get(key);
    if (layer) {
      followData = false;
      map.fitBounds(layer.getBounds().pad(0.3), { maxZoom: 18 });
    }
  }

  function listGeofences() {
    const list = $('geofences');
    const items = [...model.geofences.values()].sort((a, b) => (a.problem ? 0 : 1) - (b.problem ? 0 : 1) || a.key.localeCompare(b.key));
    list.replaceChildren(...items.map((g) => {
      const li = document.createElement('li');
      li.dataset.geofence = g.key;
      if (g.problem) {
        li.className = 'problem';
        li.textContent = `${g.id}: not drawn, ${g.problem}`;
      } else {
        const state = model.geofenceState(g, selected);
        const swatch = document.createElement('span');
        swatch.className = `swatch ${state}`;
        const scope = document.createElement('span');
        scope.className = 'scope';
        scope.textContent = ` ${g.shape.kind}${g.vehicle ? `, ${g.vehicle} only` : ''}${g.monitor !== 'default' ? `, monitor ${g.monitor}` : ''}`;
        li.append(swatch, `${g.id}${g.name ? ` · ${g.name}` : ''}`, scope);
        for (const [vehicle, reason] of Object.entries(g.refusedBy)) {
          const refusal = document.createElement('div');
          refusal.className = 'refusal';
          refusal.textContent = `refused by ${vehicle}: ${reason}`;
          li.append(refusal);
        }
        li.dataset.state = state;
        li.addEventListener('click', () => showGeofence(g.key));
      }
      return li;
    }));
    $('geofence-count').textContent = `${layers.size} drawn${model.geofences.size > layers.size ? `, ${model.geofences.size - layers.size} not` : ''}`;
  }

  // Vehicles.
  function vehicleChanged(key) {
    const v = model.vehicles.get(key);
    if (!selected) selected = key;
    if (v.location) {
      const at = [v.location.lat, v.location.lon];
      let drawn = vehicleLayers.get(key);
      if (!drawn) {
        drawn = {
          accuracy: L.circle(at, { radius: 1, color: '#007aff', weight: 1, fillOpacity: 0.1, interactive: false }).addTo(map),
          trail: L.polyline([], { color: '#1c1c1e', weight: 2, opacity: 0.6, interactive: false }).addTo(map),
          marker: L.circleMarker(at, { radius: 7, weight: 2, color: '#fff', fillOpacity: 1 }).addTo(map),
        };
        drawn.marker.bindTooltip(v.vehicle, { permanent: true, direction: 'right', offset: [8, 0], className: 'vehicle-label' });
        drawn.marker.on('click', () => select(key));
        drawn.marker.getElement().dataset.vehicle = key;
        vehicleLayers.set(key, drawn);
        fitSoon();
      }
      drawn.marker.setLatLng(at);
      drawn.accuracy.setLatLng(at).setRadius(v.location.accuracy || 0);
      drawn.trail.setLatLngs(v.trail);
      paintVehicle(key);
    }
    listVehicles();
  }

  function paintVehicle(key) {
    const drawn = vehicleLayers.get(key);
    const v = model.vehicles.get(key);
    if (!drawn || !v) return;
    const presence = model.presence(v);
    drawn.marker.setStyle({ fillColor: presence === 'online' ? '#007aff' : presence === 'silent' ? '#ff3b30' : '#8e8e93', weight: key === selected ? 3 : 2, color: key === selected ? '#1c1c1e' : '#fff' });
    drawn.marker.getElement().dataset.presence = presence;
  }

  function select(key) {
    selected = key;
    for (const k of model.geofences.keys()) paintGeofence(k);
    for (const k of vehicleLayers.keys()) paintVehicle(k);
    listVehicles();
    listGeofences();
  }

  function insideList(v) {
    const names = [];
    for (const monitor of Object.values((v.state && v.state.monitors) || {})) names.push(...Object.keys((monitor && monitor.inside) || {}));
    return names.sort().join(', ');
  }

  function listVehicles() {
    const rows = [...model.vehicles.values()].sort((a, b) => a.key.localeCompare(b.key)).map((v) => {
      const tr = document.createElement('tr');
      tr.dataset.vehicle = v.key;
      if (v.key === selected) tr.className = 'selected';
      const presence = model.presence(v);
      const s = v.status || {};
      const gps = s.gps ? `${s.gps.state}${typeof s.gps.fixAgeSeconds === 'number' ? ` ${s.gps.fixAgeSeconds.toFixed(1)} s` : ''}` : '';
      const outbox = s.outbox ? String(s.outbox.rows) : '';
      const cells = [settings.fleet === '+' ? v.key : v.vehicle, presence, gps, outbox, insideList(v)];
      cells.forEach((text, i) => {
        const td = document.createElement('td');
        td.textContent = text;
        if (i === 1) { td.className = 'presence'; td.dataset.presence = presence; }
        tr.append(td);
      });
      tr.title = s.broker ? `broker: ${s.broker}${s.place && s.place.locality ? `; near ${s.place.locality}` : ''}` : '';
      tr.addEventListener('click', () => {
        select(v.key);
        const drawn = vehicleLayers.get(v.key);
        if (drawn) { followData = false; map.panTo(drawn.marker.getLatLng()); }
      });
      return tr;
    });
    document.querySelector('#vehicles tbody').replaceChildren(...rows);
    $('vehicle-count').textContent = String(model.vehicles.size);
  }

  // The feed, newest first.
  const VERBS = { enter: 'entered', exit: 'left', dwell: 'dwelt in', crossed: 'crossed', overspeed: 'over the limit in', overspeedEnded: 'back under the limit in', active: 'schedule opened:', inactive: 'schedule closed:' };
  function near(place) {
    if (!place || !place.locality) return '';
    const where = [place.locality, place.administrativeArea, place.isoCountryCode].filter(Boolean).join(', ');
    return place.distance < 1000 ? ` · at ${where}` : ` · ${(place.distance / 1000).toFixed(1)} km from ${where}`;
  }
  function clock(time) {
    return time ? time.replace(/^\d{4}-\d\d-\d\dT/, '').replace(/\.\d+Z$|Z$/, '') : '';
  }

  function feedChanged() {
    const entry = model.feed[0];
    const li = document.createElement('li');
    const time = document.createElement('span');
    time.className = 'time';
    time.textContent = `${clock(entry.time)} `;
    if (entry.kind === 'event') {
      Object.assign(li.dataset, { eventId: entry.eventId || '', vehicle: entry.vehicleKey, identifier: entry.identifier, event: entry.event, time: entry.time || '' });
      const what = document.createElement('span');
      what.className = 'what';
      what.textContent = `${VERBS[entry.event] || entry.event} ${entry.name || entry.identifier}`;
      const place = document.createElement('span');
      place.className = 'place';
      place.textContent = `${entry.name ? ` (${entry.identifier})` : ''}${entry.reason ? `, ${entry.reason}` : ''}${near(entry.place)}`;
      li.append(time, `${entry.vehicle} `, what, place);
      if (entry.lat !== null) li.addEventListener('click', () => { followData = false; map.setView([entry.lat, entry.lon], Math.max(map.getZoom(), 15)); });
    } else {
      li.className = 'error';
      Object.assign(li.dataset, { vehicle: entry.vehicleKey, error: entry.errorKind });
      li.append(time, `${entry.vehicle} refused ${entry.errorKind} ${entry.topic}: ${entry.reason}`);
    }
    const list = $('events');
    list.prepend(li);
    while (list.children.length > model.feedLength) list.lastElementChild.remove();
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
    const change = model.receive(topic, payload);
    if (!change) return;
    switch (change.kind) {
      case 'geofence': geofenceChanged(change); break;
      case 'vehicle': vehicleChanged(change.key); break;
      case 'state':
        vehicleChanged(change.key);
        if (change.key === selected) { for (const k of model.geofences.keys()) paintGeofence(k); listGeofences(); }
        break;
      case 'feed':
        feedChanged();
        if (!model.vehicles.get(change.key).location) listVehicles();
        if (change.geofence) { paintGeofence(change.geofence); listGeofences(); }
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
        if (error || refused.length) setConnection('refused', `not allowed to read ${refused.join(', ') || error.message}`);
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

  // A vehicle that stops sending its status (every 10 s) turns silent without a message.
  setInterval(() => { for (const key of vehicleLayers.keys()) paintVehicle(key); listVehicles(); }, 5000);

  connect(params.get('username'), params.get('password'));

  // For a reader of the page's state (and the browser tests): what is drawn and known.
  window.dashboard = {
    model, map, settings,
    get connected() { return client !== null && client.connected; },
    get selected() { return selected; },
    select,
    drawnGeofences() { return [...layers.keys()].filter((key) => map.hasLayer(layers.get(key))); },
    vehicleMarker(key) { const v = vehicleLayers.get(key); return v ? v.marker.getLatLng() : null; },
  };
})();
