/**
 * Issue 23: a customer's registered name and call settings through the API (docs/api.md,
 * "Customers" and "Call settings"). Defaults shown in full, partial updates merged group by group,
 * null resets, every bound at its edge and one past it, forward without a phone refused, and the
 * OpenAPI document showing all of it.
 */
import test from 'ava';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { tableFingerprint } from '../helpers/db.ts';
import { consoleAs } from '../helpers/console.ts';

let svc: TestService;
let db: pg.Client;
let a: TestAccount;
test.before(async () => {
  svc = await startTestService();
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  a = await makeAccount(svc.url);
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
});

const codeOf = (r: { body: any }) => r.body?.error?.code;

/** The documented defaults (docs/api.md, "Call settings"), literally. */
const DEFAULTS = {
  voice: 'marin',
  voicemail: { action: 'leave_message', message: null },
  turn_detection: { silence_ms: 500, threshold: 0.5, prefix_padding_ms: 300, backchannel_max_ms: 700 },
  retries: { max_attempts: 3, min_gap_hours: 4 },
  inbound: { action: null },
  recording: { on_objection: 'continue_unrecorded' },
};

test.serial('a new customer shows every call setting at its default and no registered name, on create, get and list', async (t) => {
  const c = await makeCustomer(a.api, { name: 'Defaults Dental' });
  t.deepEqual(c.call_settings, DEFAULTS);
  t.is(c.registered_name, null);
  const got = await a.api.get(`/v1/customers/${c.id}`);
  t.deepEqual(got.body.call_settings, DEFAULTS);
  const list = await a.api.get('/v1/customers?limit=1');
  t.deepEqual(list.body.data[0].call_settings, DEFAULTS);
  // Nothing stored for what was never set: a default changed later applies to this customer.
  const { rows } = await db.query(`SELECT call_settings, registered_name FROM customers WHERE id = $1`, [c.id]);
  t.deepEqual(rows[0], { call_settings: {}, registered_name: null });
});

test.serial('registered_name round trip: set on create (trimmed), changed, cleared with null; blank and 201 characters refused', async (t) => {
  const c = await makeCustomer(a.api, { name: 'Bright', registered_name: '  Bright Dental Care LLC  ' });
  t.is(c.registered_name, 'Bright Dental Care LLC');
  let r = await a.api.patch(`/v1/customers/${c.id}`, { registered_name: 'Bright Dental Care, Inc.' });
  t.is(r.status, 200);
  t.is(r.body.registered_name, 'Bright Dental Care, Inc.');
  t.is((await a.api.get(`/v1/customers/${c.id}`)).body.registered_name, 'Bright Dental Care, Inc.');
  r = await a.api.patch(`/v1/customers/${c.id}`, { registered_name: 'R'.repeat(200) });
  t.is(r.status, 200);
  t.is(r.body.registered_name.length, 200);
  r = await a.api.patch(`/v1/customers/${c.id}`, { registered_name: 'R'.repeat(201) });
  t.is(r.status, 400);
  t.is(codeOf(r), 'field_too_long');
  t.regex(r.body.error.message, /registered_name/);
  r = await a.api.patch(`/v1/customers/${c.id}`, { registered_name: '   ' });
  t.is(codeOf(r), 'invalid_parameter');
  t.regex(r.body.error.message, /registered_name/);
  r = await a.api.patch(`/v1/customers/${c.id}`, { registered_name: 'Two\nlines' });
  t.is(codeOf(r), 'invalid_parameter');
  r = await a.api.patch(`/v1/customers/${c.id}`, { registered_name: null });
  t.is(r.status, 200);
  t.is(r.body.registered_name, null);
  // By external_ref too, as every customer route.
  const byRef = await makeCustomer(a.api, { name: 'Ref', external_ref: 'settings-ref-1' });
  r = await a.api.patch('/v1/customers/settings-ref-1', { registered_name: 'Ref Holdings Ltd' });
  t.is(r.body.id, byRef.id);
  t.is(r.body.registered_name, 'Ref Holdings Ltd');
  t.is(codeOf(await a.api.patch('/v1/customers/nobody', { registered_name: 'X' })), 'customer_not_found');
});

test.serial('a partial update merges group by group: fields not sent keep their values, other groups untouched', async (t) => {
  const c = await makeCustomer(a.api, { call_settings: { voice: 'coral', turn_detection: { silence_ms: 800 }, retries: { max_attempts: 2 } } });
  t.deepEqual(c.call_settings, { ...DEFAULTS, voice: 'coral', turn_detection: { ...DEFAULTS.turn_detection, silence_ms: 800 }, retries: { max_attempts: 2, min_gap_hours: 4 } });

  const r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { turn_detection: { threshold: 0.7 }, voicemail: { action: 'hang_up' } } });
  t.is(r.status, 200);
  t.deepEqual(r.body.call_settings, {
    ...DEFAULTS,
    voice: 'coral',
    voicemail: { action: 'hang_up', message: null },
    turn_detection: { silence_ms: 800, threshold: 0.7, prefix_padding_ms: 300, backchannel_max_ms: 700 },
    retries: { max_attempts: 2, min_gap_hours: 4 },
  });
  // The registered name is left alone by a settings change, and the reverse.
  await a.api.patch(`/v1/customers/${c.id}`, { registered_name: 'Merge LLC' });
  const got = (await a.api.get(`/v1/customers/${c.id}`)).body;
  t.is(got.registered_name, 'Merge LLC');
  t.deepEqual(got.call_settings, r.body.call_settings);
  // An empty body changes nothing.
  t.deepEqual((await a.api.patch(`/v1/customers/${c.id}`, {})).body.call_settings, r.body.call_settings);
});

test.serial('null resets a field, a group, or every setting to its default', async (t) => {
  const c = await makeCustomer(a.api, {
    call_settings: {
      voice: 'sage',
      voicemail: { action: 'hang_up', message: 'Please call us back.' },
      turn_detection: { silence_ms: 900, threshold: 0.8 },
      retries: { max_attempts: 5, min_gap_hours: 24 },
      recording: { on_objection: 'end_call' },
      inbound: { action: 'agent' },
    },
  });
  t.is(c.call_settings.voicemail.message, 'Please call us back.');
  let r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { voice: null, turn_detection: { silence_ms: null }, voicemail: { message: null } } });
  t.is(r.status, 200);
  t.is(r.body.call_settings.voice, 'marin');
  t.deepEqual(r.body.call_settings.turn_detection, { silence_ms: 500, threshold: 0.8, prefix_padding_ms: 300, backchannel_max_ms: 700 });
  t.deepEqual(r.body.call_settings.voicemail, { action: 'hang_up', message: null });
  r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { retries: null, inbound: { action: null } } });
  t.deepEqual(r.body.call_settings.retries, { max_attempts: 3, min_gap_hours: 4 });
  t.deepEqual(r.body.call_settings.inbound, { action: null });
  t.deepEqual(r.body.call_settings.recording, { on_objection: 'end_call' });
  r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: null });
  t.deepEqual(r.body.call_settings, DEFAULTS);
  const { rows } = await db.query(`SELECT call_settings FROM customers WHERE id = $1`, [c.id]);
  t.deepEqual(rows[0].call_settings, {});
});

/** Each bound: the value at each edge is accepted, one step past it is 400 invalid_parameter naming the field. */
const EDGES: { group: string; field: string; min: number; max: number; below: number; above: number }[] = [
  { group: 'turn_detection', field: 'silence_ms', min: 200, max: 2000, below: 199, above: 2001 },
  { group: 'turn_detection', field: 'threshold', min: 0.3, max: 0.9, below: 0.29, above: 0.91 },
  { group: 'turn_detection', field: 'prefix_padding_ms', min: 100, max: 1000, below: 99, above: 1001 },
  { group: 'turn_detection', field: 'backchannel_max_ms', min: 0, max: 1500, below: -1, above: 1501 },
  { group: 'retries', field: 'max_attempts', min: 1, max: 5, below: 0, above: 6 },
  { group: 'retries', field: 'min_gap_hours', min: 2, max: 72, below: 1, above: 73 },
];

test.serial('every bound: 200 and 2000 ms, 0.3 and 0.9, 100 and 1000 ms, 0 and 1500 ms, 1 and 5 attempts, 2 and 72 hours accepted; one past refused', async (t) => {
  const c = await makeCustomer(a.api, { name: 'Edges' });
  for (const e of EDGES) {
    for (const value of [e.min, e.max]) {
      const r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { [e.group]: { [e.field]: value } } });
      t.is(r.status, 200, `${e.field} = ${value}: ${r.text}`);
      t.is(r.body.call_settings[e.group][e.field], value, `${e.field} = ${value}`);
    }
    for (const value of [e.below, e.above]) {
      const before = await tableFingerprint(db);
      const r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { [e.group]: { [e.field]: value } } });
      t.is(r.status, 400, `${e.field} = ${value}`);
      t.is(codeOf(r), 'invalid_parameter', `${e.field} = ${value}`);
      t.true(r.body.error.message.includes(`call_settings.${e.group}.${e.field}`), r.body.error.message);
      t.deepEqual(await tableFingerprint(db), before, `${e.field} = ${value}: nothing written`);
    }
    // The same bounds on create.
    const created = await a.api.post('/v1/customers', { name: 'Edge on create', country: 'US', call_settings: { [e.group]: { [e.field]: e.above } } });
    t.is(codeOf(created), 'invalid_parameter', `create ${e.field} = ${e.above}`);
  }
  // Milliseconds, attempts and hours are whole numbers.
  for (const [group, field] of [['turn_detection', 'silence_ms'], ['retries', 'max_attempts'], ['retries', 'min_gap_hours']]) {
    const r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { [group]: { [field]: 3.5 } } });
    t.is(codeOf(r), 'invalid_parameter', `${field} = 3.5`);
  }
  const r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { turn_detection: { threshold: '0.5' } } });
  t.is(codeOf(r), 'invalid_parameter', 'a number sent as text');
});

test.serial('voicemail.message: 500 characters accepted, 501 refused; blank refused; enums refused outside their values', async (t) => {
  const c = await makeCustomer(a.api, { name: 'Messages' });
  let r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { voicemail: { message: 'm'.repeat(500) } } });
  t.is(r.status, 200);
  t.is(r.body.call_settings.voicemail.message.length, 500);
  r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { voicemail: { message: 'm'.repeat(501) } } });
  t.is(r.status, 400);
  t.is(codeOf(r), 'field_too_long');
  t.regex(r.body.error.message, /call_settings\.voicemail\.message/);
  r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { voicemail: { message: '  ' } } });
  t.is(codeOf(r), 'invalid_parameter');
  r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { voicemail: { message: '  Call us back, please.  ' } } });
  t.is(r.body.call_settings.voicemail.message, 'Call us back, please.', 'stored trimmed');
  // Text PostgreSQL cannot store is refused as everywhere (docs/api.md, "Text the service cannot store").
  r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { voicemail: { message: 'a\u0000b' } } });
  t.is(codeOf(r), 'invalid_string');

  const refusedValues: [string, unknown][] = [
    ['voice', 'robot'],
    ['voicemail.action', 'beep'],
    ['inbound.action', 'voicemail'],
    ['recording.on_objection', 'ignore'],
  ];
  for (const [path, value] of refusedValues) {
    const [group, field] = path.split('.');
    const body = field ? { [group]: { [field]: value } } : { [group]: value };
    r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: body });
    t.is(r.status, 400, path);
    t.is(codeOf(r), 'invalid_parameter', path);
    t.true(r.body.error.message.includes(`call_settings.${path}`), r.body.error.message);
  }
  for (const voice of ['alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse', 'marin', 'cedar']) {
    t.is((await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { voice } })).body.call_settings.voice, voice);
  }
  r = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { retries: { max_tries: 2 } } });
  t.is(codeOf(r), 'unknown_parameter');
  r = await a.api.patch(`/v1/customers/${c.id}`, { name: 'Renamed' });
  t.is(codeOf(r), 'unknown_parameter', 'only the registered name and the call settings change here');
});

test.serial('inbound.action forward without a phone is refused with 400 forward_needs_phone; with a phone it stands', async (t) => {
  const without = await makeCustomer(a.api, { name: 'No Phone' });
  const before = await tableFingerprint(db);
  let r = await a.api.patch(`/v1/customers/${without.id}`, { call_settings: { inbound: { action: 'forward' } } });
  t.is(r.status, 400);
  t.is(codeOf(r), 'forward_needs_phone');
  t.is(r.body.error.type, 'invalid_request_error');
  t.deepEqual(await tableFingerprint(db), before, 'nothing written');
  r = await a.api.post('/v1/customers', { name: 'No Phone Either', country: 'US', call_settings: { inbound: { action: 'forward' } } });
  t.is(r.status, 400);
  t.is(codeOf(r), 'forward_needs_phone');
  // agent and message need no phone.
  for (const action of ['agent', 'message']) {
    r = await a.api.patch(`/v1/customers/${without.id}`, { call_settings: { inbound: { action } } });
    t.is(r.body.call_settings.inbound.action, action);
  }

  r = await a.api.post('/v1/customers', { name: 'With Phone', country: 'GB', phone: '0113 496 0000', call_settings: { inbound: { action: 'forward' } } });
  t.is(r.status, 201);
  t.is(r.body.call_settings.inbound.action, 'forward');
  r = await a.api.patch(`/v1/customers/${r.body.id}`, { call_settings: { inbound: { action: 'message' } } });
  t.is(r.body.call_settings.inbound.action, 'message');
});

test.serial('PATCH /v1/customers/{id} takes Idempotency-Key and needs customers:write', async (t) => {
  const c = await makeCustomer(a.api, { name: 'Idem' });
  const headers = { 'idempotency-key': 'settings-idem-1' };
  const first = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { retries: { max_attempts: 4 } } }, { headers });
  t.is(first.status, 200);
  const again = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { retries: { max_attempts: 4 } } }, { headers });
  t.deepEqual(again.body, first.body);
  const other = await a.api.patch(`/v1/customers/${c.id}`, { call_settings: { retries: { max_attempts: 5 } } }, { headers });
  t.is(codeOf(other), 'idempotency_key_reused');

  const readOnly = (await a.admin.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'test', label: 'read', scopes: ['customers:read'] })).body.secret;
  const r = await call(svc.url, 'PATCH', `/v1/customers/${c.id}`, { key: readOnly, body: { registered_name: 'Nope' } });
  t.is(r.status, 403);
  t.is(codeOf(r), 'scope_missing');
});

test.serial('the OpenAPI document shows registered_name and call_settings with every enum and bound, and the update operation', async (t) => {
  const doc = (await call(svc.url, 'GET', '/v1/openapi.json')).body;
  const op = doc.paths['/v1/customers/{id}'].patch;
  t.is(op.operationId, 'updateCustomer');
  t.true(op.responses['400'].description.includes('forward_needs_phone'));
  t.true(op.responses['400'].description.includes('invalid_parameter'));
  const body = op.requestBody.content['application/json'].schema;
  t.truthy(body.properties.registered_name);
  t.is(body.properties.registered_name.maxLength, 200);
  const settings = body.properties.call_settings;
  const turn = settings.properties.turn_detection.properties;
  t.deepEqual([turn.silence_ms.minimum, turn.silence_ms.maximum], [200, 2000]);
  t.deepEqual([turn.threshold.minimum, turn.threshold.maximum], [0.3, 0.9]);
  t.deepEqual([turn.prefix_padding_ms.minimum, turn.prefix_padding_ms.maximum], [100, 1000]);
  t.deepEqual([turn.backchannel_max_ms.minimum, turn.backchannel_max_ms.maximum], [0, 1500]);
  const retries = settings.properties.retries.properties;
  t.deepEqual([retries.max_attempts.minimum, retries.max_attempts.maximum], [1, 5]);
  t.deepEqual([retries.min_gap_hours.minimum, retries.min_gap_hours.maximum], [2, 72]);
  t.is(settings.properties.voicemail.properties.message.maxLength, 500);
  t.deepEqual(settings.properties.voicemail.properties.action.enum, ['hang_up', 'leave_message', null]);
  t.deepEqual(settings.properties.inbound.properties.action.enum, ['forward', 'agent', 'message', null]);
  t.deepEqual(settings.properties.recording.properties.on_objection.enum, ['continue_unrecorded', 'end_call', null]);
  t.deepEqual(settings.properties.voice.enum, ['alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse', 'marin', 'cedar', null]);

  const create = doc.paths['/v1/customers'].post.requestBody.content['application/json'].schema;
  t.truthy(create.properties.registered_name);
  t.truthy(create.properties.call_settings.properties.turn_detection);

  // The customer as shown: both fields, every group required (defaults filled in).
  const ref = (s: any) => (s.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);
  const customer = ref(doc.paths['/v1/customers/{id}'].get.responses['200'].content['application/json'].schema);
  t.truthy(customer.properties.registered_name);
  const shown = ref(customer.properties.call_settings);
  t.deepEqual([...shown.required].sort(), ['inbound', 'recording', 'retries', 'turn_detection', 'voice', 'voicemail']);
});

test.serial('console: the customer page shows the registered name and the settings in force; customers:write roles change them, a viewer cannot', async (t) => {
  const owner = await consoleAs(svc.url, a.id, 'owner');
  const viewer = await consoleAs(svc.url, a.id, 'viewer');
  const c = await makeCustomer(a.api, { name: 'Console Dental', registered_name: 'Console Dental PLLC' });
  const page = await owner.get(`/console/api/customers/${c.id}?mode=test`);
  t.is(page.status, 200);
  t.is(page.body.customer.registered_name, 'Console Dental PLLC');
  t.deepEqual(page.body.customer.call_settings, DEFAULTS);

  let r = await owner.patch(`/console/api/customers/${c.id}`, { mode: 'test', registered_name: 'Console Dental Group', call_settings: { retries: { min_gap_hours: 72 } } });
  t.is(r.status, 200);
  t.is(r.body.registered_name, 'Console Dental Group');
  t.deepEqual(r.body.call_settings.retries, { max_attempts: 3, min_gap_hours: 72 });
  r = await owner.patch(`/console/api/customers/${c.id}`, { mode: 'test', call_settings: { retries: { min_gap_hours: 73 } } });
  t.is(codeOf(r), 'invalid_parameter');
  t.regex(r.body.error.message, /call_settings\.retries\.min_gap_hours/);
  r = await owner.patch(`/console/api/customers/${c.id}`, { mode: 'test', call_settings: { inbound: { action: 'forward' } } });
  t.is(codeOf(r), 'forward_needs_phone');
  r = await viewer.patch(`/console/api/customers/${c.id}`, { mode: 'test', registered_name: 'Nope' });
  t.is(r.status, 403);
  t.is(codeOf(r), 'role_forbidden');
  t.is((await a.api.get(`/v1/customers/${c.id}`)).body.registered_name, 'Console Dental Group');
  // The console's own route is not in the API's document.
  const doc = (await call(svc.url, 'GET', '/v1/openapi.json')).body;
  t.false(Object.keys(doc.paths).some((p) => p.startsWith('/console')));
});

test.serial('registered_address (PECR reg. 24) round trip: set on create (trimmed), changed, cleared with null; 300 characters kept, 301, blank and two lines refused; OpenAPI and console show it', async (t) => {
  const c = await makeCustomer(a.api, { name: 'Leeds Dental', country: 'GB', registered_address: '  1 High Street, Leeds LS1 1AA  ' });
  t.is(c.registered_address, '1 High Street, Leeds LS1 1AA');
  t.is((await makeCustomer(a.api, { name: 'No Address' })).registered_address, null);
  let r = await a.api.patch(`/v1/customers/${c.id}`, { registered_address: '2 Park Row, Leeds LS1 5HD' });
  t.is(r.status, 200);
  t.is((await a.api.get(`/v1/customers/${c.id}`)).body.registered_address, '2 Park Row, Leeds LS1 5HD');
  r = await a.api.patch(`/v1/customers/${c.id}`, { registered_address: 'A'.repeat(300) });
  t.is(r.status, 200);
  t.is(r.body.registered_address.length, 300);
  for (const [bad, code] of [['A'.repeat(301), 'field_too_long'], ['   ', 'invalid_parameter'], ['1 High Street\nLeeds', 'invalid_parameter'], ['--', 'invalid_parameter']]) {
    r = await a.api.patch(`/v1/customers/${c.id}`, { registered_address: bad });
    t.is(r.status, 400);
    t.is(codeOf(r), code, JSON.stringify(bad).slice(0, 20));
    t.regex(r.body.error.message, /registered_address/);
  }
  t.is((await a.api.get(`/v1/customers/${c.id}`)).body.registered_address.length, 300, 'a refused change changes nothing');
  r = await a.api.patch(`/v1/customers/${c.id}`, { registered_address: null });
  t.is(r.body.registered_address, null);
  const { rows } = await db.query(`SELECT registered_address FROM customers WHERE id = $1`, [c.id]);
  t.is(rows[0].registered_address, null);
  const doc = (await call(svc.url, 'GET', '/v1/openapi.json')).body;
  const update = doc.paths['/v1/customers/{id}'].patch.requestBody.content['application/json'].schema;
  t.is(update.properties.registered_address.maxLength, 300);
  const owner = await consoleAs(svc.url, a.id, 'owner');
  r = await owner.patch(`/console/api/customers/${c.id}`, { mode: 'test', registered_address: '3 Briggate, Leeds LS1 6HD' });
  t.is(r.status, 200);
  t.is((await owner.get(`/console/api/customers/${c.id}?mode=test`)).body.customer.registered_address, '3 Briggate, Leeds LS1 6HD');
});
