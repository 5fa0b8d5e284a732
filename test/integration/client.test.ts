/**
 * The typed client (clients/typescript, issue 26) against the real service: methods by
 * operationId, typed error classes, pagination by cursor, retries of a 429 after Retry-After,
 * an idempotent retry after a dropped connection answering the first result, and the browser's
 * chat entry with a session token.
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NO_BACKGROUND_WORK, startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import {
  AuthenticationError,
  Client,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  VoiceApiError,
} from '../../clients/typescript/src/index.ts';
import { getChatContext, sendChatMessage } from '../../clients/typescript/src/chat.ts';

let svc: TestService;
let account: TestAccount;
let client: Client;

test.before(async () => {
  svc = await startTestService(NO_BACKGROUND_WORK);
  account = await makeAccount(svc.url);
  client = new Client({ apiKey: account.testKey, baseUrl: svc.url });
});
test.after.always(async () => {
  await svc?.stop();
});

/** Every request a client sends (method, path, Idempotency-Key, status), in order. */
function recordingFetch() {
  const sent: { method: string; path: string; key: string | null; status: number }[] = [];
  const fetch = async (request: Request) => {
    const response = await globalThis.fetch(request);
    sent.push({ method: request.method, path: new URL(request.url).pathname + new URL(request.url).search, key: request.headers.get('idempotency-key'), status: response.status });
    return response;
  };
  return { sent, fetch };
}

test('customers: create, get, update, by operationId, typed from the document', async (t) => {
  const created = await client.createCustomer({ body: { name: 'Bright Dental', country: 'US', external_ref: 'client-c1' } });
  t.is(created.object, 'customer');
  t.is(created.name, 'Bright Dental');
  const got = await client.getCustomer({ params: { path: { id: created.id } } });
  t.is(got.id, created.id);
  const byRef = await client.getCustomer({ params: { path: { id: 'client-c1' } } });
  t.is(byRef.id, created.id, 'the path id takes the external_ref too');
  const updated = await client.updateCustomer({ params: { path: { id: created.id } }, body: { registered_name: 'Bright Dental LLC', call_settings: { voice: 'cedar' } } });
  t.is(updated.registered_name, 'Bright Dental LLC');
  t.is(updated.call_settings.voice, 'cedar');
  t.like(await client.getCustomer({ params: { path: { id: created.id } } }), { registered_name: 'Bright Dental LLC', call_settings: { voice: 'cedar' } });
  // The document's shapes bind the caller: a misspelt field or a missing path id does not compile.
  // @ts-expect-error `nme` is not a field of the document's body
  await t.throwsAsync(client.createCustomer({ body: { nme: 'Typo', country: 'US' } }), { instanceOf: InvalidRequestError });
  // @ts-expect-error the path's id is required
  await t.throwsAsync(client.getCustomer({ params: { path: {} } }));
  // The same operations by resource, as stripe-node names them.
  const again = await client.customers.create({ body: { name: 'Second Dental', country: 'US' } });
  t.is((await client.customers.retrieve({ params: { path: { id: again.id } } })).name, 'Second Dental');
  t.is((await client.customers.update({ params: { path: { id: again.id } }, body: { registered_name: 'Second Dental Inc' } })).registered_name, 'Second Dental Inc');
  t.is((await client.me.retrieve()).object, 'account');
});

test('readiness: the typed answer of getReadiness', async (t) => {
  const customer = await client.createCustomer({ body: { name: 'Ready Or Not', country: 'US' } });
  const readiness = await client.getReadiness({ params: { path: { id: customer.id } } });
  t.is(readiness.customer_id, customer.id);
  t.is(typeof readiness.ready_for_test_calls, 'boolean');
  t.false(readiness.ready_for_test_calls, 'a new customer has steps left');
  t.true(readiness.test_blockers.length > 0);
});

test('every POST gets an Idempotency-Key (the caller’s when given); GET gets none', async (t) => {
  const { sent, fetch } = recordingFetch();
  const c = new Client({ apiKey: account.testKey, baseUrl: svc.url, fetch });
  const first = await c.createCustomer({ body: { name: 'Keyed', country: 'US' } });
  const mine = await c.createCustomer({ body: { name: 'Keyed', country: 'US' }, idempotencyKey: 'client-test-key-1' });
  const again = await c.createCustomer({ body: { name: 'Keyed', country: 'US' }, idempotencyKey: 'client-test-key-1' });
  await c.getCustomer({ params: { path: { id: first.id } } });
  t.regex(sent[0].key ?? '', /^[0-9a-f-]{36}$/, 'a fresh UUID');
  t.is(sent[1].key, 'client-test-key-1');
  t.is(again.id, mine.id, 'the same key answers the first result');
  t.not(first.id, mine.id);
  t.is(sent[3].key, null);
});

test('pagination: for await walks all 250 customers of an account, page by page with the cursor', async (t) => {
  const other = await makeAccount(svc.url);
  const { sent, fetch } = recordingFetch();
  const c = new Client({ apiKey: other.testKey, baseUrl: svc.url, fetch });
  const made = new Set<string>();
  for (let i = 0; i < 250; i += 25) {
    const batch = await Promise.all(Array.from({ length: 25 }, (_, j) => c.createCustomer({ body: { name: `Customer ${i + j}`, country: 'US' } })));
    for (const customer of batch) made.add(customer.id);
  }
  sent.length = 0;
  const seen: string[] = [];
  for await (const customer of c.listCustomers({ params: { query: { limit: 100 } } })) seen.push(customer.id);
  t.is(seen.length, 250);
  t.deepEqual([...seen].sort(), [...made].sort(), 'every customer once');
  t.is(new Set(seen).size, 250);
  t.deepEqual(
    sent.map((s) => s.path.replace(/starting_after=[^&]+/, 'starting_after=…')),
    ['/v1/customers?limit=100', '/v1/customers?limit=100&starting_after=…', '/v1/customers?limit=100&starting_after=…'],
  );
  // By resource: client.customers.list() walks them the same way.
  const again: string[] = [];
  for await (const customer of c.customers.list()) again.push(customer.id);
  t.deepEqual(again.sort(), [...made].sort());
  // Awaited, a list answers its first page.
  const page = await c.listCustomers({ params: { query: { limit: 10 } } });
  t.is(page.data.length, 10);
  t.true(page.has_more);
});

test('errors are thrown as the class of their type, with type, code, message, request_id and status', async (t) => {
  const missing = await t.throwsAsync(client.getCustomer({ params: { path: { id: 'nobody-here' } } }), { instanceOf: NotFoundError });
  t.like(missing, { type: 'not_found_error', code: 'customer_not_found', status: 404 });
  t.regex(missing!.request_id ?? '', /^req_[0-9a-f]{24}$/);
  t.truthy(missing!.message);
  t.true(missing instanceof VoiceApiError);

  const badKey = new Client({ apiKey: 'svc_test_not_a_real_key', baseUrl: svc.url });
  t.like(await t.throwsAsync(badKey.getMe(), { instanceOf: AuthenticationError }), { type: 'authentication_error', code: 'invalid_api_key', status: 401 });

  const readOnly = await makeAccount(svc.url, { scopes: ['customers:read'] });
  const reader = new Client({ apiKey: readOnly.testKey, baseUrl: svc.url });
  t.like(await t.throwsAsync(reader.createCustomer({ body: { name: 'Nope', country: 'US' } }), { instanceOf: PermissionError }), { type: 'permission_error', code: 'scope_missing', status: 403 });

  const invalid = await t.throwsAsync(client.createCustomer({ body: { name: 'x'.repeat(201), country: 'US' } }), { instanceOf: InvalidRequestError });
  t.like(invalid, { type: 'invalid_request_error', code: 'field_too_long', status: 400 });

  await client.createCustomer({ body: { name: 'First', country: 'US' }, idempotencyKey: 'client-reused-key' });
  const reused = await t.throwsAsync(client.createCustomer({ body: { name: 'Second', country: 'US' }, idempotencyKey: 'client-reused-key' }), { instanceOf: ConflictError });
  t.like(reused, { type: 'conflict_error', code: 'idempotency_key_reused', status: 409 });

  const nobody = new Client({ apiKey: account.testKey, baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });
  t.like(await t.throwsAsync(nobody.getMe(), { instanceOf: ConnectionError }), { type: 'connection_error', status: undefined });
});

test('a 429 is retried after its Retry-After and then answered', async (t) => {
  const limited = await makeAccount(svc.url);
  // One request per 10-second burst window: the second is refused until the window ends.
  await limited.admin.patch(`/admin/v1/accounts/${limited.id}/limits`, { requests_per_minute: 1000, burst: 1 });
  const { sent, fetch } = recordingFetch();
  const c = new Client({ apiKey: limited.testKey, baseUrl: svc.url, fetch });
  await c.getMe();
  const started = Date.now();
  const me = await c.getMe();
  t.is(me.id, limited.id);
  t.deepEqual(sent.map((s) => s.status), [200, 429, 200]);
  t.true(Date.now() - started >= 900, 'it waited for Retry-After (at least a second)');

  // With retries off the 429 is thrown, with its Retry-After.
  const once = new Client({ apiKey: limited.testKey, baseUrl: svc.url, maxRetries: 0 });
  const refused = await t.throwsAsync(once.getMe(), { instanceOf: RateLimitError });
  t.like(refused, { code: 'rate_limit_exceeded', status: 429 });
  t.true(refused!.retryAfterSeconds! >= 1 && refused!.retryAfterSeconds! <= 10);
});

/** A proxy to the service that drops the connection of the first POST after the service answered it. */
async function droppingProxy(target: string) {
  const posts: { key: string | undefined; forwarded: number }[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
    const upstream = await fetch(target + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (req.method === 'POST') {
      posts.push({ key: req.headers['idempotency-key'] as string | undefined, forwarded: upstream.status });
      // The service did the work and answered; the answer is lost on the way back.
      if (posts.length === 1) return void req.socket.destroy();
    }
    res.writeHead(upstream.status, Object.fromEntries([...upstream.headers].filter(([k]) => !['content-length', 'transfer-encoding', 'connection', 'content-encoding'].includes(k))));
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

test('a POST whose answer is lost with the connection is retried with the same Idempotency-Key and answers the first result', async (t) => {
  const fresh = await makeAccount(svc.url);
  const proxy = await droppingProxy(svc.url);
  try {
    const { sent, fetch } = recordingFetch();
    const c = new Client({ apiKey: fresh.testKey, baseUrl: proxy.url, fetch });
    const customer = await c.createCustomer({ body: { name: 'Lost Answer Ltd', country: 'US' } });
    t.is(proxy.posts.length, 2, 'sent twice');
    t.deepEqual(proxy.posts.map((p) => p.forwarded), [201, 201]);
    t.truthy(proxy.posts[0].key);
    t.is(proxy.posts[1].key, proxy.posts[0].key, 'the same key on the retry');
    t.is(sent.length, 1, 'one answer reached the client');
    // The service created one customer: the retry answered the first one.
    const all = (await fresh.api.get('/v1/customers')).body.data;
    t.is(all.length, 1);
    t.is(all[0].id, customer.id);
  } finally {
    await proxy.close();
  }
});

test('chat: the browser entry takes a session token, never an API key', async (t) => {
  const customer = await client.createCustomer({ body: { name: 'Chatty Dental', country: 'US' } });
  const session = await client.createChatSession({ params: { path: { id: customer.id } }, body: { end_user_ref: 'owner-1', display_name: 'Dana' } });
  t.truthy(session.token);
  const context = await getChatContext({ baseUrl: svc.url, sessionToken: session.token! });
  t.is(context.display_name, 'Dana');
  const answer = await sendChatMessage({ baseUrl: svc.url, sessionToken: session.token!, message: 'How are my calls going?' });
  t.truthy(answer.reply);
  t.is(answer.messages_sent, 1);
  await t.throwsAsync(sendChatMessage({ baseUrl: svc.url, sessionToken: account.testKey, message: 'hi' }), { instanceOf: TypeError, message: /session token/ });
  // A session token that is not one: the service's own answer, typed.
  const bad = await t.throwsAsync(getChatContext({ baseUrl: svc.url, sessionToken: 'svc_sess_test_000000000000000000000000000000aaaaaa' }), { instanceOf: AuthenticationError });
  t.is(bad!.code, 'invalid_session_token');
});

test('the client reads the scopes each operation needs from the document (x-required-scopes)', async (t) => {
  const { requiredScopes } = await import('../../clients/typescript/src/index.ts');
  t.deepEqual(requiredScopes('createCustomer'), ['customers:write']);
  t.deepEqual(requiredScopes('listCalls'), ['calls:read']);
  t.deepEqual(requiredScopes('getMe'), []);
});
