import test from 'ava';
import fc from 'fast-check';
import { startTestService, ADMIN_TOKEN, NO_BACKGROUND_WORK, type TestService } from '../helpers/service.ts';
import { call, encodeAnyText, type Reply } from '../helpers/http.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { makeReadyCustomer } from '../helpers/calls.ts';
import { startFakeOpenAIChat, type FakeOpenAIChat } from '../fakes/openai-chat.ts';
import { consoleAs, type ConsoleClient } from '../helpers/console.ts';
import { codesOf, adminOperations, consoleOperations, documentOperations, example, fieldsOf, isErrorShape, withValue, type Operation, type Segment } from '../helpers/route-operations.ts';

/**
 * Issue 20 §2 and "Done when": a fuzzer driven by GET /v1/openapi.json (and the console's own
 * routes) sends nested, oversized, out-of-range, wrongly typed, unicode and null values to every
 * operation: every body field at any depth, the whole body, every query and path parameter, with
 * real objects in the other path parameters and a key with every scope. Whatever it sends: never
 * a 5xx, every refusal in the error shape with its request id, and for a documented operation a
 * status and error code the document lists. Deterministic (fast-check with a fixed seed) and
 * bounded (a fixed number of requests, under half a minute on an idle machine).
 */

let svc: TestService;
let fake: FakeOpenAIChat;
let account: TestAccount;
/** Another account: the console acts on it (suspends it, revokes its keys), never on the one whose key the fuzzer uses. */
let victim: TestAccount;
let ids: Record<string, string>;
let ops: Operation[];
/** The fuzzed account's owner in the console: signed in again whenever a request ended the session. */
let owner: ConsoleClient;

test.before(async () => {
  fake = await startFakeOpenAIChat();
  svc = await startTestService({ OPENAI_API_KEY: fake.apiKey, OPENAI_BASE_URL: fake.url, OPENAI_CHAT_MODEL: 'fake-chat-1', ...NO_BACKGROUND_WORK });
  account = await makeAccount(svc.url);
  victim = await makeAccount(svc.url);
  const api = account.api;
  const customer = await makeReadyCustomer(svc.url, api);
  const must = (r: Reply, what: string) => {
    if (r.status >= 300) throw new Error(`setup ${what}: ${r.status} ${r.text}`);
    return r.body;
  };
  const session = must(await api.post(`/v1/customers/${customer.id}/sessions`, { end_user_ref: 'rep-1' }), 'session');
  const queued = must(await api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: '+12025550150', business_name: 'Acme' }), 'call');
  const number = must(await api.post(`/v1/customers/${customer.id}/numbers`, { kind: 'rented' }), 'number');
  const site = must(await api.post(`/v1/customers/${customer.id}/websites`, { brief: 'A family dental practice.' }), 'website');
  must(await api.post('/v1/dnc', { phone: '+12025550143' }), 'dnc');
  const events = must(await api.get('/v1/events'), 'events');
  ids = {
    customer: customer.id,
    session: session.token,
    call: queued.id,
    number: number.id,
    build: site.id,
    event: events.data[0]?.id ?? 'evt_none',
  };
  const doc = (await api.get('/v1/openapi.json')).body;
  owner = await consoleAs(svc.url, account.id, 'owner');
  ops = [...documentOperations(doc), ...(await adminOperations(svc.services)), ...(await consoleOperations(svc.services))];
});
test.after.always(async () => {
  await svc?.stop();
  await fake?.close();
});

/** A real object for each path parameter, by the route it is on. */
function pathValue(op: Operation, name: string): string {
  if (op.path.startsWith('/admin/v1/accounts/')) return name === 'key_id' ? victim.testKeyId : name === 'id' ? victim.id : 'ref-1';
  if (name === 'id' && /^\/(console\/)?v1\/customers\//.test(op.path)) return ids.customer;
  if (name === 'id' && op.path.startsWith('/v1/calls/')) return ids.call;
  if (name === 'id' && op.path.startsWith('/v1/events/')) return ids.event;
  if (name === 'number_id') return ids.number;
  if (name === 'build_id') return ids.build;
  if (name === 'phone') return '+12025550143';
  if (name === 'locale') return 'en-US';
  if (name === 'jurisdiction') return 'US-CA';
  return 'x';
}

// — what the fuzzer sends —

/** A value spliced into the JSON text as written (numbers a JSON encoder would not write). */
class Raw {
  constructor(readonly text: string) {}
}
const nest = (levels: number, open: string, close: string, inner = '1') => new Raw(open.repeat(levels) + inner + close.repeat(levels));

/** Hostile values by kind: nested, oversized, out of range, wrong types, unicode, nulls. */
const HOSTILE: Record<string, unknown[]> = {
  nested: [nest(65, '[', ']'), nest(65, '{"a":', '}'), nest(10_000, '[', ']'), nest(4_500, '{"a":', '}'), nest(64, '[', ']', ''), [[[[[[[[1]]]]]]]], { a: { b: { c: { d: 1 } } } }],
  oversized: ['x'.repeat(100_000), '\u{1F600}'.repeat(5_000), 'a'.repeat(4_097), new Array(5_000).fill('x'), Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i]))],
  range: [2147483648, -2147483649, 2147483647, -1, 0, 1e20, -1e20, 1e12 + 1, 9007199254740991, new Raw('9007199254740993'), new Raw('-9007199254740993'), new Raw('1e400'), new Raw('-0'), 1.5, 5e-324, 123456789012345680000],
  types: [true, false, [], {}, 'text', '', ' ', 0, [null], { '': '' }, '2026-02-30T24:00:00', '1', 'null', '[]', '{}'],
  unicode: ['\u202Eevil', 'e\u0301\u0301\u0301', 'Ünïcödé 📞 電話', '\r\nBcc: all@example.com', '\t\u0085\u2028', '\uFEFF', 'ﷺ'.repeat(50), '𝓐𝓑𝓒', '../../etc/passwd', '<script>alert(1)</script>', "' OR 1=1 --", '%00%ff'],
  nulls: [null],
};
const ALL = Object.values(HOSTILE).flat();

/** Text of a JSON body holding Raw values as written. */
function bodyText(body: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(body, (_k, v) => (v instanceof Raw ? `\u0000raw${raws.push(v.text) - 1}\u0000` : v));
  return text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_, i) => raws[Number(i)]);
}

/**
 * A value as text in a URL (path or query), cut to 12,000 characters: over the 8,192 the service
 * answers (414), under the 16 KB at which node's parser closes the connection (431).
 */
function urlText(value: unknown): string {
  const text = value instanceof Raw ? value.text : typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined');
  let out = '';
  let encoded = 0;
  for (const ch of text) {
    encoded += encodeAnyText(ch).length;
    if (encoded > 12_000) break;
    out += ch;
  }
  return out;
}

type Where = 'body' | 'whole body' | 'query' | 'path';
interface Case {
  op: Operation;
  where: Where;
  at: Segment[];
  value: unknown;
}

/** Every place of an operation a value can go. */
function places(op: Operation): { where: Where; at: Segment[] }[] {
  return [
    ...op.pathParams.map((p) => ({ where: 'path' as const, at: [p] })),
    ...op.query.map((q) => ({ where: 'query' as const, at: [q.name] })),
    ...(op.body ? fieldsOf(op.body).map((at) => ({ where: 'body' as const, at })) : []),
    ...(['POST', 'PUT', 'PATCH', 'DELETE'].includes(op.method) ? [{ where: 'whole body' as const, at: [] }] : []),
  ];
}

async function send(c: Case): Promise<Reply> {
  const { op } = c;
  const fixtures = { customerId: ids.customer };
  // An empty path segment is another path (`/v1/calls/` is the list), not a value of this one.
  if (c.where === 'path' && urlText(c.value) === '') c = { ...c, value: ' ' };
  const path = op.path.replace(/\{(\w+)\}/g, (_, name) => encodeAnyText(c.where === 'path' && c.at[0] === name ? urlText(c.value) : pathValue(op, name)));
  const query = op.query
    .filter((q) => (c.where === 'query' && c.at[0] === q.name) || (q.required && q.schema.default === undefined))
    .map((q) => `${q.name}=${encodeAnyText(c.where === 'query' && c.at[0] === q.name ? urlText(c.value) : String(example(q.schema, q.name, fixtures)))}`);
  const url = query.length ? `${path}?${query.join('&')}` : path;
  let rawBody: string | undefined;
  if (c.where === 'whole body') rawBody = bodyText(c.value);
  else if (c.where === 'body') rawBody = bodyText(withValue(op.body!, example(op.body!, '', fixtures), c.at, c.value, fixtures));
  else if (op.body) rawBody = bodyText(example(op.body, '', fixtures));
  const headers: Record<string, string> = rawBody === undefined ? {} : { 'content-type': 'application/json' };
  if (op.auth === 'console') Object.assign(headers, { cookie: owner.cookie, 'x-csrf-token': owner.csrf });
  const key = op.auth === 'admin' ? ADMIN_TOKEN : op.auth === 'session' ? ids.session : op.auth === 'key' ? account.testKey : undefined;
  const reply = await call(svc.url, op.method, url, { key, rawBody, headers });
  // A fuzzed request may sign the owner out (sign_out takes any body): sign in again for the next one.
  if (op.auth === 'console' && reply.body?.error?.code === 'console_session_required') owner = await consoleAs(svc.url, account.id, 'owner');
  return reply;
}

const describe = (c: Case) => `${c.op.method} ${c.op.path} ${c.where} ${c.at.join('.')} ${bodyText(c.value)?.slice(0, 60)}`;

/** Why an answer breaks the contract, or null. */
function problem(c: Case, r: Reply): string | null {
  if (r.status >= 500) return '5xx';
  if (r.status >= 400 && !isErrorShape(r.body, r.headers.get('request-id'))) return 'not the error shape';
  if (c.op.responses) {
    const documented = c.op.responses[String(r.status)];
    if (!documented) return `status ${r.status} is not documented`;
    if (r.status >= 400 && !codesOf(documented.description).includes(r.body.error.code)) return `${r.body.error.code} is not among "${documented.description}"`;
  }
  return null;
}

test('every operation, every place, hostile values: never a 5xx, always the error shape, always what the document lists', async (t) => {
  // About 2,000 requests: under 30 s alone, under a minute beside other files on two cores.
  t.timeout(90_000);
  const started = Date.now();
  const names = new Set(ops.map((o) => `${o.method} ${o.path}`));
  t.true(ops.length >= 70, `${ops.length} operations`);
  for (const expected of ['PATCH /v1/customers/{id}/limits', 'POST /v1/chat', 'PATCH /admin/v1/accounts/{id}/limits', 'POST /admin/v1/accounts/{id}/top_ups', 'POST /console/api/keys', 'POST /console/api/sign_in']) {
    t.true(names.has(expected), expected);
  }
  const failures: string[] = [];
  let requests = 0;
  const check = async (c: Case) => {
    requests++;
    try {
      const r = await send(c);
      const wrong = problem(c, r);
      if (wrong) failures.push(`${wrong}: ${describe(c)} → ${r.status} ${r.text.slice(0, 200)}`);
    } catch (err) {
      failures.push(`no answer (${(err as Error).cause ?? err}): ${describe(c)}`);
    }
  };

  // A sweep: every place of every operation gets one value of each kind.
  const all = ops.flatMap((op) => places(op).map((p) => ({ op, ...p })));
  t.true(all.length > 200, `${all.length} places`);
  const kinds = Object.values(HOSTILE);
  for (const [i, place] of all.entries()) {
    for (const [k, values] of kinds.entries()) await check({ ...place, value: values[(i + k) % values.length] });
  }
  // Then any value at any place, from a fixed seed.
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...all), fc.constantFrom(...ALL), async (place, value) => {
      await check({ ...place, value });
    }),
    { seed: 20_2026, numRuns: 400 },
  );
  const seconds = (Date.now() - started) / 1000;
  t.log(`${ops.length} operations, ${all.length} places, ${requests} requests in ${seconds.toFixed(1)} s`);
  t.deepEqual(failures.slice(0, 40), [], `${failures.length} answers broke the contract`);
  t.deepEqual(svc.logs.lines.filter((l) => Number(l.level) >= 50).map((l) => String(l.msg)), [], 'nothing logged as an error');
});
