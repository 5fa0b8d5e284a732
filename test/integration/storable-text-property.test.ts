import test from 'ava';
import fc from 'fast-check';
import pg from 'pg';
import { startTestService, ADMIN_TOKEN, NO_BACKGROUND_WORK, type TestService } from '../helpers/service.ts';
import { call, encodeAnyText, type Reply } from '../helpers/http.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { makeReadyCustomer } from '../helpers/calls.ts';
import { tableFingerprint } from '../helpers/db.ts';
import { startFakeOpenAIChat, type FakeOpenAIChat } from '../fakes/openai-chat.ts';
import { adminOperations, consoleOperations, documentOperations, example as exampleOf, fieldsOf, withValue, type Operation, type Schema, type Segment } from '../helpers/route-operations.ts';
import { consoleAs, type ConsoleClient } from '../helpers/console.ts';
import { isStorableText } from '../../http/plugins/storable-text.ts';

/**
 * Issue 11 §2, as a property: arbitrary unicode text, NUL and lone surrogates included, thrown at
 * every string a route takes (body fields at any depth, path and query parameters) of every
 * route in the OpenAPI document and every console route. Whatever the text: never a 5xx, every
 * refusal in the error shape, and a refusal writes nothing. Text PostgreSQL cannot store is
 * always refused, as `invalid_string`.
 *
 * Routes come from the document (GET /v1/openapi.json) and, for the console (hidden from it),
 * from the routes the console modules register, so a new route is covered without editing this.
 */

interface Target {
  op: Operation;
  where: 'path' | 'query' | 'body';
  /** Parameter name, or the body path of a string field. */
  at: Segment[];
}

// Table rows written by the webhook sender after an event, on its own schedule, not by the request;
// and the line-type cache, which keeps the carrier's answer about a number (a fact of the number,
// paid for once) also when the consent gate then refuses the request (issue 20 §1).
// And the console's failed-sign-in counts: a wrong current password on the console's password
// change is counted like a wrong sign-in on purpose (the throttle keeps guessers out of both).
// A console session's `last_seen_at` moves on any request at most once a minute (its idle
// timeout), refused or not: the sessions are fingerprinted without it (`sessionsFingerprint`).
const BACKGROUND_TABLES = ['webhook_deliveries', 'webhook_attempts', 'line_type_lookups', 'console_sign_in_failures', 'console_sessions'];

/** Every table but the background ones, plus the console sessions without their last-seen time. */
async function fingerprint(): Promise<Record<string, string>> {
  const tables = await tableFingerprint(db, BACKGROUND_TABLES);
  const { rows } = await db.query(
    `SELECT count(*) || ':' || md5(coalesce(string_agg(s::text, E'\\n' ORDER BY s::text), '')) AS f
       FROM (SELECT id, user_id, account_id, token_hash, created_at, expires_at, revoked_at FROM console_sessions) s`,
  );
  return { ...tables, console_sessions: rows[0].f };
}

let svc: TestService;
let fake: FakeOpenAIChat;
let db: pg.Client;
let account: TestAccount;
let ctx: { customerId: string; sessionToken: string; callId: string };
let targets: Target[];
let owner: ConsoleClient;
/** A request ended the owner's console session: sign in again before the next fingerprint. */
let signedOut = false;

test.before(async () => {
  fake = await startFakeOpenAIChat();
  // Nothing runs on its own schedule (the website builder would build or fail, refunding, orders
  // placed here, between a refusal's row counts): every change to the database is a request's.
  svc = await startTestService({ OPENAI_API_KEY: fake.apiKey, OPENAI_BASE_URL: fake.url, OPENAI_CHAT_MODEL: 'fake-chat-1', ...NO_BACKGROUND_WORK });
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  account = await makeAccount(svc.url);
  const customer = await makeReadyCustomer(svc.url, account.api);
  const session = await account.api.post(`/v1/customers/${customer.id}/sessions`, { end_user_ref: 'rep-1' });
  const queued = await account.api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550150', business_name: 'Acme' });
  if (session.status !== 201 || queued.status !== 201) throw new Error(`setup: ${session.text} ${queued.text}`);
  ctx = { customerId: customer.id, sessionToken: session.body.token, callId: queued.body.id };

  const doc = (await account.api.get('/v1/openapi.json')).body;
  owner = await consoleAs(svc.url, account.id, 'owner');
  // The console's signed-in routes; those before a session (sign-in, resets) record attempts by design.
  const consoleOps = (await consoleOperations(svc.services)).filter((op) => op.auth === 'console');
  const ops = [...documentOperations(doc), ...(await adminOperations(svc.services)), ...consoleOps];
  targets = ops.flatMap(targetsOf);
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
  await fake?.close();
});

/** Body paths of every string field, at any depth (array items as index 0). */
const stringFields = (s: Schema) => fieldsOf(s, ['string']);
const example = (s: Schema | undefined, name = '') => exampleOf(s, name, ctx);

function targetsOf(op: Operation): Target[] {
  return [
    ...op.pathParams.map((p) => ({ op, where: 'path' as const, at: [p] })),
    ...op.query.map((q) => ({ op, where: 'query' as const, at: [q.name] })),
    ...(op.body ? stringFields(op.body).map((at) => ({ op, where: 'body' as const, at })) : []),
  ];
}

// — requests —

/** The value of a path parameter that is not the one under test: a real object where it matters. */
function pathValue(op: Operation, name: string): string {
  if (name === 'id' && /^\/(console\/)?v1\/customers\//.test(op.path)) return ctx.customerId;
  if (name === 'id' && op.path.startsWith('/admin/v1/accounts/')) return account.id;
  if (name === 'id' && op.path.startsWith('/v1/calls/')) return ctx.callId;
  return 'x';
}

async function send(target: Target, text: string): Promise<Reply> {
  const { op } = target;
  const path = op.path.replace(/\{(\w+)\}/g, (_, name) => encodeAnyText(target.where === 'path' && target.at[0] === name ? text : pathValue(op, name)));
  const query = op.query
    .filter((q) => (target.where === 'query' && target.at[0] === q.name) || (q.required && q.schema.default === undefined))
    .map((q) => `${q.name}=${encodeAnyText(target.where === 'query' && target.at[0] === q.name ? text : String(example(q.schema, q.name)))}`);
  const url = query.length ? `${path}?${query.join('&')}` : path;
  let body: unknown;
  if (op.body) body = target.where === 'body' ? withValue(op.body, example(op.body), target.at, text, ctx) : example(op.body);
  const key = op.auth === 'admin' ? ADMIN_TOKEN : op.auth === 'session' ? ctx.sessionToken : op.auth === 'key' ? account.testKey : undefined;
  const headers: Record<string, string> = op.auth === 'console' ? { cookie: owner.cookie, 'x-csrf-token': owner.csrf } : {};
  const reply = await call(svc.url, op.method, url, { key, body, headers });
  if (op.auth === 'console' && reply.body?.error?.code === 'console_session_required') signedOut = true;
  return reply;
}

const describe = (t: Target) => `${t.op.method} ${t.op.path} ${t.where} ${t.at.join('.')}`;

/** Any text: mostly arbitrary code points, often NUL and lone halves of surrogate pairs. */
const anyText = fc.string({
  unit: fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\ud83d', '\ude00') },
    { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  ),
  maxLength: 40,
});

test('arbitrary text at every string of every route: never 5xx, refusals in the error shape and writing nothing', async (t) => {
  t.timeout(600_000);
  t.true(targets.length > 100, `${targets.length} targets`);
  const ops = new Set(targets.map((x) => `${x.op.method} ${x.op.path}`));
  for (const expected of ['POST /v1/customers', 'PATCH /v1/brand', 'POST /v1/calls', 'POST /v1/chat', 'DELETE /v1/dnc/{phone}', 'POST /admin/v1/accounts']) {
    t.true(ops.has(expected), expected);
  }
  const started = Date.now();
  let requests = 0;
  // The fingerprint after a refusal is the one before the next request.
  let known: Record<string, string> | null = null;
  const check = async (target: Target, text: string) => {
    if (signedOut) {
      owner = await consoleAs(svc.url, account.id, 'owner');
      signedOut = false;
      known = null;
    }
    const before = known ?? (await fingerprint());
    known = null;
    const r = await send(target, text);
    requests++;
    const what = `${describe(target)} ${JSON.stringify(text)} → ${r.status} ${r.text.slice(0, 300)}`;
    if (r.status >= 500) throw new Error(`5xx: ${what}`);
    if (r.status >= 400) {
      const e = r.body?.error;
      const shaped = e && ['type', 'code', 'message', 'request_id'].every((k) => typeof e[k] === 'string') && e.request_id === r.headers.get('request-id');
      if (!shaped) throw new Error(`not the error shape: ${what}`);
      const after = await fingerprint();
      const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
      if (changed.length) throw new Error(`refused but wrote ${changed.join(', ')}: ${what}`);
      known = after;
    }
    if (!isStorableText(text) && !(r.status === 400 && r.body?.error?.code === 'invalid_string')) throw new Error(`unstorable text not refused as invalid_string: ${what}`);
    return true;
  };

  // Every target gets NUL and both halves of a surrogate pair, alone and inside text.
  for (const target of targets) for (const text of ['\u0000', `a\ud800b`, '\udfff', 'ok\u0000']) await check(target, text);
  // Then arbitrary text at arbitrary targets.
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...targets), anyText, (target, text) => check(target, text)),
    { numRuns: targets.length * 6, includeErrorInReport: true },
  );
  t.log(`${targets.length} targets on ${ops.size} routes, ${requests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});
