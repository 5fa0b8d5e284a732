import test, { type ExecutionContext } from 'ava';
import net from 'node:net';
import pg from 'pg';
import twilio from 'twilio';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call, encodeAnyText, type Reply } from '../helpers/http.ts';
import { adminClient, makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { tableFingerprint } from '../helpers/db.ts';
import { makeReadyCustomer } from '../helpers/calls.ts';
import { startFakeOpenAIChat, type FakeOpenAIChat } from '../fakes/openai-chat.ts';

/**
 * Issue 11 §2: text PostgreSQL cannot store (NUL, a lone UTF-16 surrogate) is refused with 400
 * invalid_string before anything runs, wherever it travels: a body string at any depth, a path
 * or query parameter, a stored header, a form. test/integration/storable-text-property.test.ts
 * throws arbitrary text at every route; these are the cases the issue names.
 */

const TWILIO_TOKEN = 'twilio-auth-token-for-tests';
let svc: TestService;
let fake: FakeOpenAIChat;
let db: pg.Client;
let a: TestAccount;
let customer: { id: string };

test.before(async () => {
  fake = await startFakeOpenAIChat();
  svc = await startTestService({
    OPENAI_API_KEY: fake.apiKey,
    OPENAI_BASE_URL: fake.url,
    OPENAI_CHAT_MODEL: 'fake-chat-1',
    TWILIO_ACCOUNT_SID: 'AC00000000000000000000000000000000',
    TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
    TWILIO_API_BASE_URL: 'http://127.0.0.1:9',
    SWITCHBOARD_DIALLER_POLL_MS: '3600000',
  });
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  a = await makeAccount(svc.url);
  customer = await makeCustomer(a.api, { external_ref: 'crm-1' });
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
  await fake?.close();
});

const NUL = '\u0000';
const HIGH = '\ud800';
const LOW = '\udc00';

// Every test compares whole-database fingerprints, so none runs beside another.

/** Runs `send` and asserts it was refused with 400 invalid_string in the error shape, writing nothing. */
async function refused(t: ExecutionContext, what: string, send: () => Promise<Reply>) {
  const before = await tableFingerprint(db);
  const r = await send();
  t.is(r.status, 400, `${what}: ${r.text}`);
  t.is(r.body?.error?.code, 'invalid_string', what);
  t.is(r.body?.error?.type, 'invalid_request_error', what);
  t.regex(r.body?.error?.request_id ?? '', /^req_[0-9a-f]{24}$/, what);
  t.is(r.headers.get('request-id'), r.body?.error?.request_id, what);
  t.deepEqual(await tableFingerprint(db), before, `${what} wrote nothing`);
  return r;
}

test.serial('the issue\'s two requests: a NUL name and a NUL path parameter', async (t) => {
  const r = await refused(t, 'name NUL', () => a.api.post('/v1/customers', { name: NUL }));
  t.regex(r.body.error.message, /"name"/, 'the message names the field');
  t.notRegex(r.body.error.message, /\u0000/, 'and never echoes the text');
  await refused(t, 'GET /v1/customers/%00', () => a.api.get('/v1/customers/%00'));
});

test.serial('lone surrogates, high or low, anywhere in a string, are refused like NUL (they used to become U+FFFD)', async (t) => {
  for (const bad of [HIGH, LOW, `a${HIGH}`, `${LOW}b`, `${LOW}${HIGH}`, `ok${NUL}`]) {
    await refused(t, `name ${JSON.stringify(bad)}`, () => a.api.post('/v1/customers', { name: bad }));
    await refused(t, `external_ref ${JSON.stringify(bad)}`, () => a.api.post('/v1/customers', { name: 'Fine', external_ref: bad }));
  }
  // A well-formed pair is an ordinary character.
  const emoji = await a.api.post('/v1/customers', { name: 'Smile \u{1F600} Dental' });
  t.is(emoji.status, 201);
  t.is(emoji.body.name, 'Smile \u{1F600} Dental');
});

test.serial('path parameters: NUL and an encoded lone surrogate (not valid UTF-8) on every kind of path', async (t) => {
  for (const bad of [NUL, HIGH, `x${LOW}`]) {
    const seg = encodeAnyText(bad);
    await refused(t, `customer ${seg}`, () => a.api.get(`/v1/customers/${seg}`));
    await refused(t, `customer readiness ${seg}`, () => a.api.get(`/v1/customers/${seg}/readiness`));
    await refused(t, `call ${seg}`, () => a.api.get(`/v1/calls/${seg}`));
    await refused(t, `dnc ${seg}`, () => a.api.delete(`/v1/dnc/${seg}`));
    await refused(t, `event ${seg}`, () => a.api.get(`/v1/events/${seg}`));
    await refused(t, `console account ${seg}`, () => a.admin.get(`/admin/v1/accounts/${seg}`));
  }
});

test.serial('what the router refuses by itself answers in the error shape: a stray %FF, a path parameter over 1,024 characters', async (t) => {
  await refused(t, '%FF', () => a.api.get('/v1/customers/%FF'));
  const before = await tableFingerprint(db);
  const long = await a.api.get(`/v1/customers/${'x'.repeat(1025)}`);
  t.is(long.status, 414, long.text);
  t.like(long.body.error, { code: 'uri_too_long', type: 'invalid_request_error' });
  t.is(long.headers.get('request-id'), long.body.error.request_id);
  t.deepEqual(await tableFingerprint(db), before);
});

test.serial('query parameters: a NUL cursor of the do-not-call list (a 500 before) and other lists', async (t) => {
  await refused(t, 'dnc cursor', () => a.api.get('/v1/dnc?starting_after=%00'));
  await refused(t, 'customers cursor', () => a.api.get('/v1/customers?starting_after=%00'));
  await refused(t, 'events type', () => a.api.get('/v1/events?type=%00'));
  await refused(t, 'sessions end_user_ref', () => a.api.delete(`/v1/customers/${customer.id}/sessions?end_user_ref=%00`));
});

test.serial('body strings at any depth: brand, limits, calls, DNC, provisioning, sessions', async (t) => {
  await refused(t, 'brand display_name', () => a.api.patch('/v1/brand', { display_name: `North${NUL}wind` }));
  await refused(t, 'brand support_email', () => a.api.patch('/v1/brand', { support_email: `a${HIGH}@example.com` }));
  await refused(t, 'call business_name', () => a.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550101', business_name: `Acme${NUL}` }));
  await refused(t, 'call external_ref', () => a.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550101', business_name: 'Acme', external_ref: LOW }));
  await refused(t, 'dnc phone', () => a.api.post('/v1/dnc', { phone: `+12025550101${NUL}` }));
  await refused(t, 'dnc reason', () => a.api.post('/v1/dnc', { phone: '+12025550101', reason: NUL }));
  await refused(t, 'provisioning step', () => a.api.post(`/v1/customers/${customer.id}/provisioning`, { steps: [`number${NUL}`] }));
  await refused(t, 'session end_user_ref', () => a.api.post(`/v1/customers/${customer.id}/sessions`, { end_user_ref: `rep${NUL}` }));
  await refused(t, 'session display_name', () => a.api.post(`/v1/customers/${customer.id}/sessions`, { end_user_ref: 'rep', display_name: HIGH }));
  // A key that is not a field at all is refused too, without echoing it.
  const key = await refused(t, 'a NUL field name', () => a.api.post('/v1/customers', { name: 'Fine', [`x${NUL}`]: 1 }));
  t.notRegex(key.body.error.message, /\u0000/);
});

test.serial('the Idempotency-Key header: NUL is refused by the HTTP parser itself, before anything runs or is stored', async (t) => {
  const before = await tableFingerprint(db);
  const body = JSON.stringify({ name: 'Header Test' });
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(svc.port, '127.0.0.1', () => {
      socket.write(
        `POST /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${a.testKey}\r\nContent-Type: application/json\r\n` +
          `Idempotency-Key: key\u0000one\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        'latin1',
      );
    });
    let data = '';
    socket.on('data', (d) => (data += d.toString('latin1')));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
  t.regex(raw, /^HTTP\/1\.1 400 /);
  t.deepEqual(await tableFingerprint(db), before);
  // The service-side check covers a stored header whichever parser delivers it (unit-tested in
  // storable-text.test.ts); an ordinary key still works.
  const ok = await a.api.post('/v1/customers', { name: 'Header Test' }, { headers: { 'idempotency-key': 'key-one' } });
  t.is(ok.status, 201);
});

test.serial('chat: message, history entries, and history sent as a string holding the array', async (t) => {
  const session = (await a.api.post(`/v1/customers/${customer.id}/sessions`, { end_user_ref: 'rep-1' })).body;
  const chat = (body: unknown) => call(svc.url, 'POST', '/v1/chat', { key: session.token, body });
  await refused(t, 'message', () => chat({ message: `Hi${NUL}` }));
  await refused(t, 'history content', () => chat({ message: 'Hi', history: [{ role: 'user', content: HIGH }] }));
  // JSON.stringify writes NUL as the escape \u0000: the string itself holds no NUL until parsed.
  await refused(t, 'history string', () => chat({ message: 'Hi', history: JSON.stringify([{ role: 'assistant', content: `a${NUL}b` }]) }));
  await refused(t, 'history string with a lone surrogate', () => chat({ message: 'Hi', history: JSON.stringify([{ role: 'user', content: LOW }]) }));
  const ok = await chat({ message: 'Hi', history: JSON.stringify([{ role: 'user', content: 'Hello \u{1F44B}' }]) });
  t.is(ok.status, 200, ok.text);
});

test.serial('console bodies and parameters', async (t) => {
  const con = adminClient(svc.url);
  await refused(t, 'account name', () => con.post('/admin/v1/accounts', { name: `Agency${NUL}`, country: 'US' }));
  await refused(t, 'key label', () => con.post(`/admin/v1/accounts/${a.id}/keys`, { mode: 'test', label: HIGH }));
  await refused(t, 'top-up reference', () => con.post(`/admin/v1/accounts/${a.id}/top_ups`, { amount_cents: 5000, payment_reference: NUL }));
  await refused(t, 'script', () => con.post(`/admin/v1/customers/${customer.id}/script/certify`, { script: `Hello${NUL}` }));
  await refused(t, 'research notes', () => con.post(`/admin/v1/customers/${customer.id}/research`, { notes: LOW }));
  await refused(t, 'locale', () => con.post(`/admin/v1/languages/${encodeAnyText(`en-US${NUL}`)}/certify`));
  await refused(t, 'hold reference', () => con.post(`/admin/v1/accounts/${a.id}/holds/${encodeAnyText(NUL)}/end`, { duration_seconds: 1 }));
});

test.serial('the onboarding form: a NUL name gets a 400 page, the link stays active and the terms unaccepted', async (t) => {
  const link = await a.api.post(`/v1/customers/${customer.id}/onboarding_link`);
  const path = new URL(link.body.url).pathname;
  // (A form value whose percent-encoding is not UTF-8 is kept as the literal text sent, which
  // can be stored; browsers encode a lone surrogate as U+FFFD anyway.)
  for (const bad of [`Jane${NUL}`, `${NUL}`]) {
    const before = await tableFingerprint(db);
    const r = await call(svc.url, 'POST', path, {
      rawBody: `accepted_by=${encodeAnyText(bad)}&agree=yes`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.is(r.status, 400, JSON.stringify(bad));
    t.regex(r.headers.get('content-type') ?? '', /text\/html/);
    t.regex(r.text, /cannot be saved/);
    t.deepEqual(await tableFingerprint(db), before);
  }
  const list = await a.api.get(`/v1/customers/${customer.id}/onboarding_link`);
  t.like(list.body.data[0], { status: 'active', accepted_by: null });
  t.false(svc.logs.lines.some((l) => l.msg === 'onboarding page failed'), 'nothing failed');
});

test.serial('carrier callbacks: a signed form carrying NUL is refused, nothing stored', async (t) => {
  const ready = await makeReadyCustomer(svc.url, a.api, { name: 'Ready Co' });
  const queued = await a.api.post('/v1/calls', { called_party: 'business', customer_id: ready.id, phone: '+12025550102', business_name: 'Acme' });
  t.is(queued.status, 201, queued.text);
  const callId = queued.body.id;
  const path = `/telephony/twilio/status?call_id=${callId}`;
  const form = { CallSid: `CA${NUL}1`, CallStatus: 'completed', CallDuration: '12' };
  const signature = twilio.getExpectedTwilioSignature(TWILIO_TOKEN, `${svc.url}${path}`, form);
  await refused(t, 'twilio status', () =>
    call(svc.url, 'POST', path, {
      rawBody: new URLSearchParams(form).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    }),
  );
});
