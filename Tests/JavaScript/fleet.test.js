// The dashboard's fleet model (dashboard/fleet.js) against the agent's topics and track payloads, from the
// vectors the Swift tests check the agent with (Tests/Vectors/fleet-contract.json). Run by
// `node --test Tests/JavaScript` (FleetModelJavaScriptTests, in the integration lane).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

require(path.join(__dirname, '../../dashboard/geometry.js'));
require(path.join(__dirname, '../../dashboard/fleet.js'));
const { FleetModel, decodeTrack, statusCells } = globalThis;
const vectors = JSON.parse(fs.readFileSync(path.join(__dirname, '../Vectors/fleet-contract.json'), 'utf8'));
const { topics, track } = vectors;

test('the model reads each vehicle topic it shows, and only those', () => {
  const model = new FleetModel({ prefix: topics.prefix });
  const shown = ['events', 'location', 'track', 'status', 'state', 'errors'];
  for (const [kind, topic] of Object.entries(topics.perVehicle)) {
    const about = model.parse(topic);
    if (shown.includes(kind)) {
      assert.deepEqual(about, { kind, fleet: topics.fleet, vehicle: topics.vehicle }, topic);
    } else {
      assert.equal(about, null, `${topic} is not one the dashboard reads`);
    }
  }
});

test('geofence topics, fleet-wide and per vehicle, name their id', () => {
  const model = new FleetModel({ prefix: topics.prefix });
  assert.deepEqual(model.parse(topics.fleetGeofence.topic), {
    kind: 'geofence', fleet: topics.fleet, vehicle: null, id: topics.fleetGeofence.id,
  });
  assert.deepEqual(model.parse(topics.vehicleGeofence.topic), {
    kind: 'geofence', fleet: topics.fleet, vehicle: topics.vehicle, id: topics.vehicleGeofence.id,
  });
});

test("the model's subscriptions are the agent's topics with + for a vehicle", () => {
  const model = new FleetModel({ prefix: topics.prefix });
  const subscriptions = model.subscriptions(topics.fleet);
  const anyVehicle = (topic) => topic.replace(`/vehicles/${topics.vehicle}/`, '/vehicles/+/');
  assert.ok(subscriptions.includes(topics.fleetGeofences));
  assert.ok(subscriptions.includes(anyVehicle(topics.vehicleGeofences)));
  for (const kind of ['events', 'location', 'track', 'status', 'state', 'errors']) {
    assert.ok(subscriptions.includes(anyVehicle(topics.perVehicle[kind])), kind);
  }
});

test('a track payload decodes to the points it was encoded from', () => {
  for (const vector of track) {
    assert.deepEqual(decodeTrack(vector.payload), {
      sequence: vector.sequence, vehicle: vector.vehicle, points: vector.points,
    });
  }
});

test('a track draws its last fix that is not an excursion, once per sequence', () => {
  const model = new FleetModel({ prefix: topics.prefix });
  for (const vector of track) {
    const change = model.receive(topics.perVehicle.track, vector.payload, 0);
    assert.deepEqual(change, { kind: 'vehicle', key: `${topics.fleet}/${topics.vehicle}` });
    const last = vector.points.filter((p) => !p.excursion).at(-1);
    const location = model.vehicles.get(`${topics.fleet}/${topics.vehicle}`).location;
    assert.equal(location.lat, last.lat / 1e6);
    assert.equal(location.lon, last.lon / 1e6);
    assert.equal(location.isStationary, last.stationary);
    assert.equal(model.receive(topics.perVehicle.track, vector.payload, 0), null, 'a sequence already seen');
  }
});

test('the vehicle list shows what a status lacks as missing, never as undefined', () => {
  const missing = '\u2014';
  assert.deepEqual(statusCells({ status: 'offline' }), { gps: missing, outbox: missing });
  assert.deepEqual(statusCells(undefined), { gps: missing, outbox: missing });
  assert.deepEqual(statusCells({ gps: {}, outbox: {} }), { gps: missing, outbox: missing });
  assert.deepEqual(
    statusCells({ gps: { state: 'fix', fixAgeSeconds: 0.42 }, outbox: { rows: 3 } }), { gps: 'fix 0.4 s', outbox: '3' });
  assert.deepEqual(statusCells({ gps: { state: 'noFix' }, outbox: { rows: 0 } }), { gps: 'noFix', outbox: '0' });
});
