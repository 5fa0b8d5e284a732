/**
 * The OpenAPI document as a contract tester reads it (issue 11 §7): every operation of
 * `GET /v1/openapi.json` driven through its success and error cases against the real app, found
 * by its operationId, and every answer checked against the document with ajv in strict mode:
 * its status must be documented, its content type listed, its body valid. A request the server
 * accepted must be one the document allows (required parameters sent, body where required, body
 * valid). The last test checks that every documented status below 500 was seen.
 */
import { postCalendarForm } from '../helpers/calendar.ts';
import test, { type ExecutionContext } from 'ava';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ADMIN_TOKEN, startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../helpers/http.ts';
import { makeAccount, makeCustomer, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished } from '../helpers/calls.ts';
import { Spectral, Document } from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import owaspRuleset from '@stoplight/spectral-owasp-ruleset';
import { serversFor } from '../../http/plugins/openapi.ts';
import { ERRORS } from '../../http/errors.ts';
import { EVENT_TYPES } from '../../actors/webhooks/event-types.ts';
import { ADDITIVE } from '../../http/schemas/common.ts';
import { loadDncRegistries } from '../helpers/dnc-registries.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Schema = Record<string, unknown>;
type Media = { schema?: Schema; example?: unknown };
interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: Schema & { maxLength?: number };
}
interface Operation {
  operationId: string;
  method: string;
  path: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
  security?: unknown[];
}
interface Send {
  /** API key or session token. */
  key?: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** Sent as is, with its own content-type header. */
  rawBody?: string;
  headers?: Record<string, string>;
}
interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

let svc: TestService;
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };
const operations = new Map<string, Operation>();
/** operationId → the statuses it answered during this run. */
const answered = new Map<string, Set<string>>();

// Strict: an unknown keyword, a loose type or a `required` naming no property is an error.
const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
addFormats(ajv);
ajv.addKeyword('x-error-code');
// OpenAPI's discriminator (Event, ReadinessAction) names the property the branches' consts already tell apart.
ajv.addKeyword('discriminator');
const COMPONENTS = 'https://contract.test/components';
const validators = new Map<string, ValidateFunction>();

/** `schema` with its `#/components/schemas/…` references pointing at the components added to ajv. */
const resolvable = <T>(schema: T): T => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${COMPONENTS}#/$defs/`));

/** A document schema compiled once; its `#/components/schemas/…` references point at the components. */
function validatorOf(where: string, schema: Schema): ValidateFunction {
  let v = validators.get(where);
  if (!v) {
    v = ajv.compile(resolvable(schema));
    validators.set(where, v);
  }
  return v;
}

let account: TestAccount;
/** A key of `account` that only answers from 10.0.0.0/8. */
let farKey: string;
/** A key of an account allowed one request a minute. */
let throttledKey: string;
let sessionToken: string;

test.before(async () => {
  // The dialler runs when asked (console), so the tests decide when a call is dialled.
  // The dialler and the website builder run only when a test asks (a build the builder's own poll
  // finished between an order and its revision made "409 website_not_ready" a 200 on a busy machine).
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000', SWITCHBOARD_BUILDER_POLL_MS: '3600000', SWITCHBOARD_SITES_DOMAIN: 'sites.contract.example' });
  const r = await call(svc.url, 'GET', '/v1/openapi.json');
  doc = r.body;
  ajv.addSchema(resolvable({ $id: COMPONENTS, $defs: doc.components.schemas }));
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      operations.set(op.operationId, { ...op, method: method.toUpperCase(), path });
      answered.set(op.operationId, new Set());
    }
  }
  account = await makeAccount(svc.url);
  // US calls wait until the US do-not-call registry is loaded (issue 20 §1).
  await loadDncRegistries(account.admin, 'US');
  farKey = (await account.admin.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'far', ip_allowlist: ['10.0.0.0/8'] })).body.secret;
  const throttled = await makeAccount(svc.url);
  await throttled.admin.patch(`/admin/v1/accounts/${throttled.id}/limits`, { requests_per_minute: 1, burst: 1 });
  throttledKey = throttled.testKey;
  // A Tuesday, 15:00 UTC: 10:00 in New York, inside every US calling window.
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await svc?.stop();
});

/** Fails `t` with `message` unless `ok`; returns `ok`. */
function expect(t: ExecutionContext, ok: boolean, message: string): boolean {
  if (!ok) t.fail(message);
  return ok;
}

/** What the document says about a request the server accepted: it must have allowed it. */
function checkAcceptedRequest(t: ExecutionContext, op: Operation, s: Send) {
  const where = `${op.operationId} answered 2xx`;
  const query = op.parameters?.filter((p) => p.in === 'query') ?? [];
  for (const p of query) if (p.required) expect(t, s.query?.[p.name] !== undefined, `${where} without "${p.name}", which the document marks required`);
  for (const name of Object.keys(s.query ?? {})) expect(t, query.some((p) => p.name === name), `${where} to the undocumented query parameter "${name}"`);
  if (s.body === undefined && s.rawBody === undefined) {
    expect(t, !op.requestBody?.required, `${where} without a body, which the document marks required`);
  } else if (s.body !== undefined) {
    const media = op.requestBody?.content['application/json'];
    if (expect(t, Boolean(media?.schema), `${where} to a JSON body the document does not declare`)) {
      const v = validatorOf(`${op.operationId} request`, media!.schema!);
      expect(t, v(s.body), `${where} to a body the document refuses: ${ajv.errorsText(v.errors)}`);
    }
  }
}

/**
 * Sends one request to the operation `operationId` and checks the answer against the document:
 * status documented, content type listed, body valid against that response's schema.
 */
async function send(t: ExecutionContext, operationId: string, s: Send = {}): Promise<Answer> {
  const op = operations.get(operationId);
  if (!op) throw new Error(`no operation ${operationId} in the document`);
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (s.params?.[name] === undefined) throw new Error(`${operationId}: no value for {${name}}`);
    return encodeURIComponent(s.params[name]);
  });
  const query = new URLSearchParams(s.query).toString();
  const headers: Record<string, string> = { ...s.headers };
  if (s.key) headers.authorization = `Bearer ${s.key}`;
  let body = s.rawBody;
  if (s.body !== undefined) {
    body = JSON.stringify(s.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${svc.url}${path}${query ? `?${query}` : ''}`, { method: op.method, headers, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  const type = (res.headers.get('content-type') ?? '').split(';')[0].trim();
  const parsed = type === 'application/json' ? JSON.parse(bytes.toString()) : bytes;
  const where = `${operationId} ${op.method} ${path} → ${res.status}`;
  answered.get(operationId)!.add(String(res.status));

  const documented = op.responses[String(res.status)];
  if (expect(t, Boolean(documented), `${where} is not documented: ${bytes.toString().slice(0, 300)}`)) {
    const media = documented.content?.[type];
    if (expect(t, Boolean(media), `${where}: content type "${type}" is not documented (${Object.keys(documented.content ?? {}).join(', ')})`)) {
      if (type === 'application/json') {
        const v = validatorOf(`${operationId} ${res.status}`, media!.schema!);
        expect(t, v(parsed), `${where}: the body does not match the document: ${ajv.errorsText(v.errors)} in ${bytes.toString().slice(0, 300)}`);
        // Each error status lists the codes it carries ("error.code: a, b").
        const code = parsed?.error?.code;
        if (res.status >= 400) expect(t, codesOf(documented.description).includes(code), `${where}: error.code ${code} is not among "${documented.description}"`);
      } else {
        expect(t, bytes.length > 0, `${where}: an empty ${type} body`);
      }
    }
  }
  if (res.status < 300) checkAcceptedRequest(t, op, s);
  return { status: res.status, body: parsed, headers: res.headers };
}

/** The error codes a response's description lists. */
const codesOf = (description: string) => /^error\.code: (.+)$/.exec(description)?.[1].split(', ') ?? [];

/** Sends and asserts the status (and the error code, for an error). */
async function expectAnswer(t: ExecutionContext, operationId: string, s: Send, status: number, code?: string): Promise<Answer> {
  const r = await send(t, operationId, s);
  t.is(r.status, status, `${operationId} ${JSON.stringify(s).slice(0, 160)}: ${JSON.stringify(r.body).slice(0, 300)}`);
  if (code) t.is(r.body?.error?.code, code, operationId);
  return r;
}

const isSessionOperation = (op: Operation) => JSON.stringify(op.security) === JSON.stringify([{ sessionToken: [] }]);
const exampleOf = (op: Operation) => op.requestBody?.content['application/json']?.example;

/** A request every operation's validation lets through: ids of the right shape, its example body. */
function passing(op: Operation, key: string): Send {
  const params = Object.fromEntries((op.parameters ?? []).filter((p) => p.in === 'path').map((p) => [p.name, 'missing-1']));
  const body = exampleOf(op);
  return { key, params, ...(body === undefined ? {} : { body }) };
}

const keyOf = (op: Operation) => (isSessionOperation(op) ? sessionToken : account.testKey);

test.serial('the document: every operation has an operationId, a one-line description and a declared tag; every request body an example', (t) => {
  t.true(operations.size >= 34);
  const tags = new Set(((doc as any).tags as { name: string }[]).map((tag) => tag.name));
  for (const op of operations.values()) {
    t.regex(op.operationId ?? '', /^[a-z][A-Za-z]+$/, `${op.method} ${op.path}`);
    const description = (op as any).description as string | undefined;
    t.true(Boolean(description) && !description!.includes('\n'), `${op.operationId}: one line`);
    for (const tag of (op as any).tags as string[]) t.true(tags.has(tag), `${op.operationId}: tag ${tag} declared`);
    if (op.requestBody) t.not(exampleOf(op), undefined, `${op.operationId}: request body example`);
  }
  t.is(new Set([...operations.values()].map((op) => op.operationId)).size, operations.size, 'operationIds are unique');
});

test.serial("Spectral's spectral:oas ruleset reports nothing: no error, no warning, no hint", async (t) => {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[oas, 'recommended']] } as never);
  const text = (await call(svc.url, 'GET', '/v1/openapi.json')).text;
  const findings = await spectral.run(new Document(text, Parsers.Json, 'openapi.json'));
  t.deepEqual(findings.map((f) => `${f.code} at ${f.path.join('.')}: ${f.message}`), []);
});

test.serial("Spectral's OWASP API ruleset reports no error on the document a production install serves (https server)", async (t) => {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[owaspRuleset, 'recommended']] } as never);
  const served = (await call(svc.url, 'GET', '/v1/openapi.json')).body;
  // The test service's public URL is plain http, which the document marks local and internal.
  t.deepEqual(served.servers.map((s: { 'x-internal': boolean }) => s['x-internal']), [true]);
  const production = { ...served, servers: serversFor('https://api.example.com') };
  t.deepEqual(production.servers, [{ url: 'https://api.example.com', description: 'production', 'x-internal': false }]);
  const findings = await spectral.run(new Document(JSON.stringify(production), Parsers.Json, 'openapi.json'));
  t.deepEqual(findings.filter((f) => f.severity === 0).map((f) => `${f.code} at ${f.path.join('.')}: ${f.message}`), []);
});

test.serial('the document names its resources, enums and unions (issue 26): generators give precise types', (t) => {
  const schemas = doc.components.schemas as Record<string, any>;
  for (const name of [
    'Error', 'Customer', 'CreatedCustomer', 'CustomerList', 'Readiness', 'ReadinessBlocker', 'ReadinessAction', 'Provisioning', 'Coverage', 'CallRequest',
    'CallRequestList', 'Call', 'CallList', 'Event', 'EventList', 'Brand', 'Balance', 'UsageEntryList', 'Appointment', 'AppointmentList', 'Number',
    'WebsiteBuild', 'Account', 'ChatSession', 'ChatMessage', 'Transcript', 'ComplianceRecord', 'DncEntryList', 'OnboardingLinkList', 'CustomerLimits',
  ]) {
    t.truthy(schemas[name], `components.schemas.${name}`);
  }
  // Every JSON success answer is a named schema, or a union of named ones.
  for (const op of operations.values()) {
    for (const [status, response] of Object.entries(op.responses).filter(([s]) => s.startsWith('2'))) {
      const schema = response.content?.['application/json']?.schema as any;
      if (!schema) continue;
      const refs = schema.$ref ? [schema.$ref] : (schema.anyOf ?? schema.oneOf ?? []).map((s: any) => s.$ref);
      t.true(refs.length > 0 && refs.every((r: unknown) => typeof r === 'string'), `${op.operationId} ${status}: ${JSON.stringify(schema).slice(0, 120)}`);
    }
  }
  t.deepEqual(operations.get('getRecording')!.responses['200'].content!['audio/wav'].schema!.format, 'binary');
  // Enums, each saying that more values may come.
  const enumOf = (schema: any) => {
    t.true(String(schema.description).includes(ADDITIVE), JSON.stringify(schema).slice(0, 120));
    return schema.enum as string[];
  };
  t.deepEqual(enumOf(schemas.Error.properties.error.properties.code), Object.keys(ERRORS));
  t.deepEqual(enumOf(schemas.Customer.properties.status), ['prospect', 'active', 'paused']);
  t.deepEqual(enumOf(schemas.Balance.properties.low_balance), ['ok', 'below_25_percent', 'below_10_percent', 'zero']);
  t.deepEqual(enumOf(schemas.Account.properties.onboarding.properties.kyb_status), ['pending', 'verified', 'rejected']);
  t.deepEqual(enumOf(schemas.DncEntry.properties.source), ['api', 'callee_request', 'console']);
  t.deepEqual(enumOf(schemas.Coverage.properties.number_route), ['local_rental', 'none']);
  t.true(enumOf(schemas.Call.properties.outcome).includes('appointment_booked'));
  t.true(enumOf(schemas.Provisioning.properties.state).includes('awaiting_calendar'));
  t.true(enumOf(schemas.UsageEntry.properties.cause).includes('website_hosting'));
  t.deepEqual(enumOf(schemas.Transcript.properties.lines.items.properties.role), ['agent', 'callee']);
  // The readiness action and the event: unions discriminated by type.
  t.deepEqual(schemas.ReadinessAction.discriminator.propertyName, 'type');
  // (@fastify/swagger writes a const as a one-value enum.)
  const single = (schema: any) => schema.const ?? (schema.enum?.length === 1 ? schema.enum[0] : undefined);
  t.deepEqual(schemas.ReadinessAction.anyOf.map((s: any) => single(schemas[s.$ref.split('/').pop()].properties.type)), ['api', 'console']);
  t.deepEqual(Object.keys(schemas.Event.discriminator.mapping), [...EVENT_TYPES]);
  for (const branch of schemas.Event.anyOf) {
    const event = schemas[branch.$ref.split('/').pop()];
    t.true(EVENT_TYPES.includes(single(event.properties.type)), branch.$ref);
    t.regex(event.properties.data.$ref ?? '', /^#\/components\/schemas\/(Call|Appointment|Readiness|Balance|RotatedApiKey|Number|WebsiteBuild)$/, branch.$ref);
  }
  t.deepEqual((doc as any).webhooks.event.post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/Event' });
  t.deepEqual(schemas.EventList.properties.data.items, { $ref: '#/components/schemas/Event' });
  // GET /v1/calls: which list, by view.
  t.deepEqual(operations.get('listCalls')!.responses['200'].content!['application/json'].schema!.anyOf, [
    { $ref: '#/components/schemas/CallList' },
    { $ref: '#/components/schemas/CallRequestList' },
  ]);
  // The chat routes take a session token; every other operation names the scope its key needs.
  for (const op of operations.values()) {
    const scopes = (op as any)['x-required-scopes'] as string[];
    if (op.path.startsWith('/v1/chat')) {
      t.deepEqual(op.security, [{ sessionToken: [] }], op.operationId);
      t.deepEqual(scopes, [], op.operationId);
    } else {
      t.is(op.security, undefined, `${op.operationId}: the document's apiKey`);
      t.true(Array.isArray(scopes), op.operationId);
    }
  }
  t.deepEqual((operations.get('queueCall') as any)['x-required-scopes'], ['calls:write']);
  t.deepEqual((operations.get('getMe') as any)['x-required-scopes'], []);
});

test.serial('request body examples: each is accepted as it stands (on a customer whose external_ref is the one they name)', async (t) => {
  const example = (id: string) => exampleOf(operations.get(id)!);
  const key = account.testKey;
  const created = await expectAnswer(t, 'createCustomer', { key, body: example('createCustomer') }, 201);
  const id = (example('createCustomer') as { external_ref: string }).external_ref;
  t.is(created.body.external_ref, id);
  // Ready for calls: language and script certified (console), a number, the terms accepted.
  await account.admin.post(`/admin/v1/languages/${created.body.coverage.calling_language}/certify`);
  await expectAnswer(t, 'requestProvisioning', { key, params: { id }, body: example('requestProvisioning') }, 202);
  await account.admin.post(`/admin/v1/customers/${created.body.id}/script/certify`);
  const link = await expectAnswer(t, 'createOnboardingLink', { key, params: { id }, body: example('createOnboardingLink') }, 201);
  t.is(link.body.emailed_to, (example('createOnboardingLink') as { email: string }).email, 'the example emails the link: emailed_to says so');
  await call(svc.url, 'POST', new URL(link.body.url).pathname, {
    rawBody: new URLSearchParams({ accepted_by: 'Owner', agree: 'yes' }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.true((await expectAnswer(t, 'getReadiness', { key, params: { id } }, 200)).body.ready_for_test_calls);

  await expectAnswer(t, 'updateCustomerLimits', { key, params: { id }, body: example('updateCustomerLimits') }, 200);
  await expectAnswer(t, 'updateCustomer', { key, params: { id }, body: example('updateCustomer') }, 200);
  await expectAnswer(t, 'updateBrand', { key, body: example('updateBrand') }, 200);
  await expectAnswer(t, 'addDncEntry', { key, body: example('addDncEntry') }, 201);
  const session = await expectAnswer(t, 'createChatSession', { key, params: { id }, body: example('createChatSession') }, 201);
  sessionToken = session.body.token;
  await expectAnswer(t, 'sendChatMessage', { key: sessionToken, body: example('sendChatMessage') }, 200);
  await expectAnswer(t, 'queueCall', { key, body: example('queueCall') }, 201);
});

test.serial('every operation: 401 without credentials, 400 unknown_parameter for an unknown query parameter (issue 11 §6)', async (t) => {
  for (const op of operations.values()) {
    const s = passing(op, keyOf(op));
    const unauthenticated = await send(t, op.operationId, { ...s, key: undefined });
    t.is(unauthenticated.status, 401, op.operationId);
    // `?mode=live` on /v1/balance used to answer the test balance: refused everywhere now.
    for (const name of ['mode', 'zz_unknown']) {
      const r = await send(t, op.operationId, { ...s, query: { [name]: 'live' } });
      t.is(r.status, 400, `${op.operationId} ?${name}=`);
      t.is(r.body.error?.code, 'unknown_parameter', `${op.operationId} ?${name}=`);
    }
  }
});

test.serial('every API-key operation: 403 from outside the key allowlist, 429 over the account limit', async (t) => {
  for (const op of [...operations.values()].filter((o) => !isSessionOperation(o))) {
    await expectAnswer(t, op.operationId, passing(op, farKey), 403, 'ip_not_allowed');
    // One request a minute: the first of a new window may pass, the next cannot.
    let r = await send(t, op.operationId, passing(op, throttledKey));
    if (r.status !== 429) r = await send(t, op.operationId, passing(op, throttledKey));
    t.is(r.status, 429, op.operationId);
    t.is(r.body.error?.code, 'rate_limit_exceeded', op.operationId);
  }
});

test.serial('every path id over its documented maximum is 400 field_too_long', async (t) => {
  for (const op of operations.values()) {
    for (const p of (op.parameters ?? []).filter((x) => x.in === 'path' && x.schema.maxLength)) {
      const s = passing(op, keyOf(op));
      await expectAnswer(t, op.operationId, { ...s, params: { ...s.params, [p.name]: 'x'.repeat(p.schema.maxLength! + 1) } }, 400, 'field_too_long');
    }
  }
});

test.serial('every operation that may carry a body: 400 invalid_json and unsupported_content_type as documented', async (t) => {
  for (const op of [...operations.values()].filter((o) => ['POST', 'PATCH', 'DELETE'].includes(o.method))) {
    const { body: _, ...s } = passing(op, keyOf(op));
    await expectAnswer(t, op.operationId, { ...s, rawBody: '{"a":', headers: { 'content-type': 'application/json' } }, 400, 'invalid_json');
    await expectAnswer(t, op.operationId, { ...s, rawBody: 'hello', headers: { 'content-type': 'text/plain' } }, 400, 'unsupported_content_type');
  }
});

test.serial('every write that takes Idempotency-Key: 409 idempotency_key_reused for a key used on another request', async (t) => {
  const key = account.testKey;
  await expectAnswer(t, 'createCustomer', { key, body: { name: 'Idempotent Ltd' }, headers: { 'idempotency-key': 'reused-key' } }, 201);
  const idempotent = [...operations.values()].filter((op) => /idempotency_key_reused/.test(op.responses['409']?.description ?? ''));
  t.true(idempotent.length >= 8);
  for (const op of operations.values()) {
    // Declared exactly where the write takes it, with its limit; the 2xx answers declare the replay marker.
    const declared = (op.parameters ?? []).find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
    t.is(Boolean(declared), idempotent.includes(op), `${op.operationId}: Idempotency-Key declared`);
    if (declared) t.is(declared.schema.maxLength, 255, op.operationId);
    for (const [status, response] of Object.entries(op.responses)) {
      const headers = Object.keys((response as { headers?: object }).headers ?? {});
      t.true(['request-id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'].every((h) => headers.includes(h)), `${op.operationId} ${status}: ${headers}`);
      t.is(headers.includes('idempotent-replayed'), Boolean(declared) && status.startsWith('2'), `${op.operationId} ${status}: the replay marker`);
      if (status === '429') t.true(headers.includes('Retry-After'), `${op.operationId} 429: Retry-After`);
    }
  }
  for (const op of idempotent) {
    const s = passing(op, key);
    await expectAnswer(t, op.operationId, { ...s, params: Object.fromEntries(Object.keys(s.params ?? {}).map((k) => [k, 'bright-1'])), headers: { 'idempotency-key': 'reused-key' } }, 409, 'idempotency_key_reused');
  }
});

test.serial('account, brand, coverage and balance', async (t) => {
  const key = account.testKey;
  await expectAnswer(t, 'getMe', { key }, 200);
  await expectAnswer(t, 'getBrand', { key }, 200);
  await expectAnswer(t, 'updateBrand', { key, body: { primary_color: 'blue' } }, 400, 'invalid_brand_field');
  await expectAnswer(t, 'updateBrand', { key }, 200);
  await expectAnswer(t, 'getCoverage', { key }, 200);
  await expectAnswer(t, 'getCoverage', { key, query: { country: 'US' } }, 200);
  await expectAnswer(t, 'getCoverage', { key, query: { country: 'USA' } }, 400, 'invalid_parameter');
  await expectAnswer(t, 'getBalance', { key }, 200);
});

test.serial('customers: lists without limit, bodies that are optional sent without one, not found, conflicts', async (t) => {
  const key = account.testKey;
  const id = 'bright-1';
  await expectAnswer(t, 'createCustomer', { key, body: {} }, 400, 'name_required');
  await expectAnswer(t, 'createCustomer', { key, body: { name: 'Twin', external_ref: id } }, 409, 'external_ref_taken');
  const list = await expectAnswer(t, 'listCustomers', { key }, 200);
  await expectAnswer(t, 'listCustomers', { key, query: { limit: '1', starting_after: list.body.data[0].id } }, 200);
  await expectAnswer(t, 'listCustomers', { key, query: { starting_after: 'cus_nothing' } }, 400, 'invalid_cursor');
  await expectAnswer(t, 'listCustomers', { key, query: { limit: '0' } }, 400, 'invalid_parameter');
  for (const operationId of ['getCustomer', 'getReadiness', 'getProvisioning', 'listOnboardingLinks', 'getCustomerLimits', 'listChatSessions']) {
    await expectAnswer(t, operationId, { key, params: { id } }, 200);
    await expectAnswer(t, operationId, { key, params: { id: 'nobody' } }, 404, 'customer_not_found');
  }
  // The README asks for provisioning and mints a link without a body.
  await expectAnswer(t, 'requestProvisioning', { key, params: { id } }, 202);
  await expectAnswer(t, 'requestProvisioning', { key, params: { id }, body: { steps: ['fax'] } }, 400, 'invalid_provisioning_step');
  await expectAnswer(t, 'requestProvisioning', { key, params: { id: 'nobody' } }, 404, 'customer_not_found');
  await expectAnswer(t, 'createOnboardingLink', { key, params: { id } }, 201);
  await expectAnswer(t, 'createOnboardingLink', { key, params: { id: 'nobody' } }, 404, 'customer_not_found');
  await expectAnswer(t, 'updateCustomerLimits', { key, params: { id }, body: { daily_spend_cap_cents: -1 } }, 400, 'invalid_limit');
  await expectAnswer(t, 'updateCustomerLimits', { key, params: { id: 'nobody' }, body: {} }, 404, 'customer_not_found');
  await expectAnswer(t, 'updateCustomerLimits', { key, params: { id } }, 200);
  // Issue 23: the registered name and call settings.
  await expectAnswer(t, 'updateCustomer', { key, params: { id }, body: { call_settings: { retries: { max_attempts: 6 } } } }, 400, 'invalid_parameter');
  await expectAnswer(t, 'updateCustomer', { key, params: { id }, body: { call_settings: { inbound: { action: 'forward' } } } }, 400, 'forward_needs_phone');
  await expectAnswer(t, 'updateCustomer', { key, params: { id: 'nobody' }, body: {} }, 404, 'customer_not_found');
  await expectAnswer(t, 'updateCustomer', { key, params: { id } }, 200);
  // Issue 24: the calendar connection and its link.
  await expectAnswer(t, 'getCustomerCalendar', { key, params: { id } }, 200);
  await expectAnswer(t, 'getCustomerCalendar', { key, params: { id: 'nobody' } }, 404, 'customer_not_found');
  const calendarLink = await expectAnswer(t, 'createCalendarLink', { key, params: { id } }, 201);
  await expectAnswer(t, 'createCalendarLink', { key, params: { id: 'nobody' } }, 404, 'customer_not_found');
  await expectAnswer(t, 'disconnectCustomerCalendar', { key, params: { id } }, 409, 'calendar_not_connected');
  t.is((await postCalendarForm(calendarLink.body.url, { connect: 'test' })).status, 303);
  await expectAnswer(t, 'disconnectCustomerCalendar', { key, params: { id } }, 200);
  await expectAnswer(t, 'disconnectCustomerCalendar', { key, params: { id: 'nobody' } }, 404, 'customer_not_found');
});

test.serial('calls, transcripts, recordings, appointments, the do-not-call list and events', async (t) => {
  const key = account.testKey;
  const queued = await expectAnswer(t, 'queueCall', { key, body: { called_party: 'business', customer_id: 'bright-1', phone: '+12025550101' } }, 200);
  t.is(queued.body.external_ref, 'lead-1', 'the example request, still open, answered again');
  await expectAnswer(t, 'queueCall', { key, body: { customer_id: 'nobody', phone: '+12025550101' } }, 404, 'customer_not_found');
  await expectAnswer(t, 'queueCall', { key, body: { called_party: 'business', customer_id: 'bright-1', phone: 'twelve' } }, 400, 'invalid_phone_number');
  const callee = await expectAnswer(t, 'queueCall', { key, body: { called_party: 'business', customer_id: 'bright-1', phone: '+12025550155' } }, 201); // 5: asks not to be called
  const toCancel = await expectAnswer(t, 'queueCall', { key, body: { called_party: 'business', customer_id: 'bright-1', phone: '+12025550129' } }, 201);

  // Before it is dialled: no transcript, no recording; cancelled, then cancelled again.
  await expectAnswer(t, 'getComplianceRecord', { key, params: { id: toCancel.body.id } }, 404, 'compliance_record_not_found');
  await expectAnswer(t, 'getTranscript', { key, params: { id: toCancel.body.id } }, 404, 'transcript_not_available');
  await expectAnswer(t, 'getRecording', { key, params: { id: toCancel.body.id } }, 404, 'recording_not_available');
  await expectAnswer(t, 'cancelCall', { key, params: { id: toCancel.body.id } }, 200);
  await expectAnswer(t, 'cancelCall', { key, params: { id: toCancel.body.id } }, 200);

  const booked = await dialUntilFinished(account, account.api, queued.body.id);
  t.is(booked.outcome, 'appointment_booked');
  await dialUntilFinished(account, account.api, callee.body.id);
  await expectAnswer(t, 'getCall', { key, params: { id: booked.id } }, 200);
  await expectAnswer(t, 'cancelCall', { key, params: { id: booked.id } }, 409, 'call_already_finished');
  await expectAnswer(t, 'getTranscript', { key, params: { id: booked.id } }, 200);
  await expectAnswer(t, 'getComplianceRecord', { key, params: { id: booked.id } }, 200);
  await expectAnswer(t, 'getComplianceRecord', { key, params: { id: 'call_nothing' } }, 404, 'call_not_found');
  const recording = await expectAnswer(t, 'getRecording', { key, params: { id: booked.id } }, 200);
  t.is(recording.headers.get('content-type'), 'audio/wav');
  t.is((recording.body as Buffer).subarray(0, 4).toString('ascii'), 'RIFF');
  for (const operationId of ['getCall', 'cancelCall', 'getTranscript', 'getRecording']) {
    await expectAnswer(t, operationId, { key, params: { id: 'call_nothing' } }, 404, 'call_not_found');
  }
  const queries: Record<string, string>[] = [{}, { view: 'requests' }, { customer_id: 'bright-1', status: 'completed', limit: '2' }];
  for (const query of queries) await expectAnswer(t, 'listCalls', { key, query }, 200);
  await expectAnswer(t, 'listCalls', { key, query: { view: 'all' } }, 400, 'invalid_parameter');
  await expectAnswer(t, 'listCalls', { key, query: { customer_id: 'nobody' } }, 404, 'customer_not_found');

  await expectAnswer(t, 'listAppointments', { key }, 200);
  await expectAnswer(t, 'listAppointments', { key, query: { customer_id: 'bright-1', status: 'booked', from: '2020-01-01T00:00:00.000Z' } }, 200);
  await expectAnswer(t, 'listAppointments', { key, query: { status: 'moved' } }, 400, 'invalid_parameter');
  await expectAnswer(t, 'listAppointments', { key, query: { customer_id: 'nobody' } }, 404, 'customer_not_found');
  await expectAnswer(t, 'getAppointment', { key, params: { id: booked.appointment_id } }, 200);
  await expectAnswer(t, 'getAppointment', { key, params: { id: 'apt_nothing' } }, 404, 'appointment_not_found');

  const phone = (exampleOf(operations.get('addDncEntry')!) as { phone: string }).phone;
  await expectAnswer(t, 'addDncEntry', { key, body: { phone } }, 200);
  await expectAnswer(t, 'addDncEntry', { key, body: { phone: 'twelve' } }, 400, 'invalid_phone_number');
  await expectAnswer(t, 'listDncEntries', { key }, 200);
  await expectAnswer(t, 'removeDncEntry', { key, params: { phone } }, 200);
  await expectAnswer(t, 'removeDncEntry', { key, params: { phone } }, 404, 'dnc_entry_not_found');
  await expectAnswer(t, 'removeDncEntry', { key, params: { phone: '+12025550155' } }, 409, 'dnc_entry_protected');
  await expectAnswer(t, 'removeDncEntry', { key, params: { phone: 'twelve' } }, 400, 'invalid_phone_number');

  const events = await expectAnswer(t, 'listEvents', { key, query: { order: 'asc', type: 'call.completed' } }, 200);
  await expectAnswer(t, 'listEvents', { key, query: { order: 'up' } }, 400, 'invalid_parameter');
  await expectAnswer(t, 'getEvent', { key, params: { id: events.body.data[0].id } }, 200);
  await expectAnswer(t, 'getEvent', { key, params: { id: 'evt_nothing' } }, 404, 'event_not_found');

  await expectAnswer(t, 'listUsage', { key }, 200);
  await expectAnswer(t, 'listUsage', { key, query: { customer_id: 'bright-1', limit: '5' } }, 200);
  await expectAnswer(t, 'listUsage', { key, query: { limit: 'many' } }, 400, 'invalid_parameter');
  await expectAnswer(t, 'listUsage', { key, query: { customer_id: 'nobody' } }, 404, 'customer_not_found');
});

test.serial('chat sessions and the assistant: history as an array or as a string, 401, 402, 429', async (t) => {
  const key = account.testKey;
  const id = 'bright-1';
  await expectAnswer(t, 'createChatSession', { key, params: { id }, body: {} }, 400, 'end_user_ref_required');
  await expectAnswer(t, 'createChatSession', { key, params: { id: 'nobody' }, body: { end_user_ref: 'rep-1' } }, 404, 'customer_not_found');
  const s = await expectAnswer(t, 'createChatSession', { key, params: { id }, body: { end_user_ref: 'rep-1' } }, 201);

  await expectAnswer(t, 'getChatContext', { key: s.body.token }, 200);
  await expectAnswer(t, 'getChatContext', { key: 'svc_sess_test_nothing' }, 401, 'invalid_session_token');
  const history = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }];
  await expectAnswer(t, 'sendChatMessage', { key: s.body.token, body: { message: 'And now?', history } }, 200);
  // The spec declares history a string: the document says both forms are accepted.
  await expectAnswer(t, 'sendChatMessage', { key: s.body.token, body: { message: 'And now?', history: JSON.stringify(history) } }, 200);
  await expectAnswer(t, 'sendChatMessage', { key: s.body.token, body: { message: 'x', history: '"a string"' } }, 400, 'invalid_parameter');
  await expectAnswer(t, 'sendChatMessage', { key: s.body.token, body: { message: '' } }, 400, 'message_required');

  await expectAnswer(t, 'revokeChatSessions', { key, params: { id } }, 400, 'session_selector_required');
  await expectAnswer(t, 'revokeChatSessions', { key, params: { id }, query: { session_id: 'chs_nothing' } }, 404, 'session_not_found');
  await expectAnswer(t, 'revokeChatSessions', { key, params: { id: 'nobody' }, query: { end_user_ref: 'rep-1' } }, 404, 'customer_not_found');
  await expectAnswer(t, 'revokeChatSessions', { key, params: { id }, query: { session_id: s.body.id } }, 200);
  await expectAnswer(t, 'sendChatMessage', { key: s.body.token, body: { message: 'still there?' } }, 401, 'session_revoked');

  // A session's last message: 429 once all of them are used.
  const spent = await expectAnswer(t, 'createChatSession', { key, params: { id }, body: { end_user_ref: 'rep-2' } }, 201);
  const replies = await Promise.all(
    Array.from({ length: spent.body.message_limit }, () => call(svc.url, 'POST', '/v1/chat', { key: spent.body.token, body: { message: 'hi' } })),
  );
  t.true(replies.every((r) => r.status === 200));
  await expectAnswer(t, 'sendChatMessage', { key: spent.body.token, body: { message: 'one more' } }, 429, 'session_exhausted');

  // A live session of an account with no money: 402.
  const live = await makeAccount(svc.url, { live: true });
  const customer = await makeCustomer(live.liveApi!);
  const liveSession = await expectAnswer(t, 'createChatSession', { key: live.liveKey!, params: { id: customer.id }, body: { end_user_ref: 'rep-1' } }, 201);
  await expectAnswer(t, 'sendChatMessage', { key: liveSession.body.token, body: { message: 'hello' } }, 402, 'insufficient_balance');
});

test.serial('numbers: rent, a caller ID, list, get, release; 402 without money, 404, 409, 400', async (t) => {
  const key = account.testKey;
  const id = 'bright-1';
  const rented = await expectAnswer(t, 'createNumber', { key, params: { id }, body: exampleOf(operations.get('createNumber')!) }, 201);
  await expectAnswer(t, 'createNumber', { key, params: { id }, body: { kind: 'caller_id' } }, 400, 'parameter_missing');
  await expectAnswer(t, 'createNumber', { key, params: { id: 'nobody' } }, 404, 'customer_not_found');
  await expectAnswer(t, 'createNumber', { key, params: { id }, body: { kind: 'caller_id', phone_number: '+12025550140' } }, 201);
  await expectAnswer(t, 'createNumber', { key, params: { id }, body: { kind: 'caller_id', phone_number: '+12025550140' } }, 409, 'number_already_added');
  await expectAnswer(t, 'listNumbers', { key, params: { id } }, 200);
  await expectAnswer(t, 'listNumbers', { key, params: { id }, query: { starting_after: 'nothing' } }, 400, 'invalid_cursor');
  await expectAnswer(t, 'listNumbers', { key, params: { id: 'nobody' } }, 404, 'customer_not_found');
  await expectAnswer(t, 'getNumber', { key, params: { id, number_id: rented.body.id } }, 200);
  await expectAnswer(t, 'getNumber', { key, params: { id, number_id: 'nothing' } }, 404, 'number_not_found');
  await expectAnswer(t, 'releaseNumber', { key, params: { id, number_id: rented.body.id } }, 200);
  await expectAnswer(t, 'releaseNumber', { key, params: { id, number_id: 'nothing' } }, 404, 'number_not_found');
  const live = await makeAccount(svc.url, { live: true });
  const customer = await makeCustomer(live.liveApi!);
  await expectAnswer(t, 'createNumber', { key: live.liveKey!, params: { id: customer.id } }, 402, 'insufficient_balance');
});

test.serial('websites: order, build, publish, revision, domain, cancel; 402 without money, 404, 409, 400', async (t) => {
  const key = account.testKey;
  const id = 'bright-1';
  const ordered = await expectAnswer(t, 'orderWebsite', { key, params: { id }, body: exampleOf(operations.get('orderWebsite')!) }, 202);
  const buildId = ordered.body.id;
  await expectAnswer(t, 'orderWebsite', { key, params: { id }, body: { brief: 'x'.repeat(4001) } }, 400, 'field_too_long');
  await expectAnswer(t, 'orderWebsite', { key, params: { id: 'nobody' } }, 404, 'customer_not_found');
  await expectAnswer(t, 'publishWebsite', { key, params: { id, build_id: buildId }, body: {} }, 409, 'website_not_ready');
  await expectAnswer(t, 'reviseWebsite', { key, params: { id, build_id: buildId }, body: { brief: 'Later.' } }, 409, 'website_not_ready');
  await call(svc.url, 'POST', '/admin/v1/website_builder/run', { key: ADMIN_TOKEN });
  await expectAnswer(t, 'listWebsites', { key, params: { id } }, 200);
  await expectAnswer(t, 'listWebsites', { key, params: { id }, query: { starting_after: 'nothing' } }, 400, 'invalid_cursor');
  await expectAnswer(t, 'listWebsites', { key, params: { id: 'nobody' } }, 404, 'customer_not_found');
  await expectAnswer(t, 'getWebsite', { key, params: { id, build_id: buildId } }, 200);
  await expectAnswer(t, 'getWebsite', { key, params: { id, build_id: 'nothing' } }, 404, 'website_not_found');
  await expectAnswer(t, 'publishWebsite', { key, params: { id, build_id: buildId }, body: {} }, 200);
  await expectAnswer(t, 'publishWebsite', { key, params: { id, build_id: 'nothing' }, body: {} }, 404, 'website_not_found');
  await expectAnswer(t, 'reviseWebsite', { key, params: { id, build_id: buildId }, body: exampleOf(operations.get('reviseWebsite')!) }, 200);
  await expectAnswer(t, 'reviseWebsite', { key, params: { id, build_id: buildId }, body: {} }, 400, 'parameter_missing');
  await expectAnswer(t, 'reviseWebsite', { key, params: { id, build_id: 'nothing' }, body: { brief: 'x' } }, 404, 'website_not_found');
  await call(svc.url, 'POST', '/admin/v1/website_builder/run', { key: ADMIN_TOKEN });
  await expectAnswer(t, 'reviseWebsite', { key, params: { id, build_id: buildId }, body: { brief: 'Again.' } }, 409, 'revision_limit_reached');
  // A test site takes only names reserved for testing.
  await expectAnswer(t, 'setWebsiteDomain', { key, params: { id, build_id: buildId }, body: exampleOf(operations.get('setWebsiteDomain')!) }, 400, 'test_mode_domain');
  await expectAnswer(t, 'setWebsiteDomain', { key, params: { id, build_id: buildId }, body: { domain: 'www.bright.test' } }, 200);
  await expectAnswer(t, 'setWebsiteDomain', { key, params: { id, build_id: buildId }, body: { domain: 'not a domain' } }, 400, 'invalid_domain');
  await expectAnswer(t, 'setWebsiteDomain', { key, params: { id, build_id: 'nothing' }, body: { domain: 'www.x.test' } }, 404, 'website_not_found');
  await expectAnswer(t, 'setWebsiteDomain', { key, params: { id, build_id: buildId }, body: { domain: 'www.other.test' } }, 409, 'domain_already_set');
  await expectAnswer(t, 'setWebsiteDomain', { key, params: { id, build_id: buildId }, body: { domain: 'www.other.test', replace: true } }, 200);
  await expectAnswer(t, 'reissueWebsitePreview', { key, params: { id, build_id: buildId }, body: {} }, 200);
  await expectAnswer(t, 'reissueWebsitePreview', { key, params: { id, build_id: 'nothing' }, body: {} }, 404, 'website_not_found');
  await expectAnswer(t, 'reissueWebsitePreview', { key, params: { id, build_id: buildId }, body: { x: 1 } }, 400, 'unknown_parameter');
  const second = await expectAnswer(t, 'orderWebsite', { key, params: { id }, body: { brief: 'A second site for the same practice, for its new branch.' } }, 202);
  await expectAnswer(t, 'reissueWebsitePreview', { key, params: { id, build_id: second.body.id }, body: {} }, 409, 'website_not_ready');
  await expectAnswer(t, 'cancelWebsite', { key, params: { id, build_id: second.body.id } }, 200);
  await expectAnswer(t, 'cancelWebsite', { key, params: { id, build_id: 'nothing' } }, 404, 'website_not_found');
  const live = await makeAccount(svc.url, { live: true });
  const customer = await makeCustomer(live.liveApi!);
  await expectAnswer(t, 'orderWebsite', { key: live.liveKey!, params: { id: customer.id }, body: { brief: 'A practice.' } }, 402, 'insufficient_balance');
  // Money for the build and none for hosting: publishing is 402.
  await call(svc.url, 'POST', `/admin/v1/accounts/${live.id}/top_ups`, { key: ADMIN_TOKEN, body: { amount_cents: 35_000 } });
  const paid = await expectAnswer(t, 'orderWebsite', { key: live.liveKey!, params: { id: customer.id }, body: exampleOf(operations.get('orderWebsite')!) }, 202);
  await call(svc.url, 'POST', '/admin/v1/website_builder/run', { key: ADMIN_TOKEN });
  await expectAnswer(t, 'publishWebsite', { key: live.liveKey!, params: { id: customer.id, build_id: paid.body.id }, body: {} }, 402, 'insufficient_balance');
});

test.serial('every operation: 414 uri_too_long for a URL over 8,192 characters, 431 over 16 KB, before authentication', async (t) => {
  for (const op of operations.values()) {
    const s = passing(op, keyOf(op));
    await expectAnswer(t, op.operationId, { ...s, query: { starting_after: 'a'.repeat(8_200) } }, 414, 'uri_too_long');
    await expectAnswer(t, op.operationId, { ...s, key: undefined, query: { starting_after: 'a'.repeat(8_200) } }, 414, 'uri_too_long');
    await expectAnswer(t, op.operationId, { ...s, query: { starting_after: 'a'.repeat(17_000) } }, 431, 'headers_too_large');
  }
});

/** Every integer of a schema, with its path (array items as `[]`). */
function integersOf(schema: Schema | undefined, at: string[] = []): { at: string[]; schema: Schema }[] {
  if (!schema || typeof schema !== 'object') return [];
  const resolved = typeof schema.$ref === 'string' ? doc.components.schemas[(schema.$ref as string).split('/').pop()!] : schema;
  const types = [resolved.type ?? []].flat();
  const own = types.includes('integer') ? [{ at, schema: resolved }] : [];
  const children = [
    ...Object.entries((resolved.properties ?? {}) as Record<string, Schema>).flatMap(([k, v]) => integersOf(v, [...at, k])),
    ...integersOf(resolved.items as Schema | undefined, [...at, '[]']),
    ...((resolved.anyOf ?? resolved.oneOf ?? []) as Schema[]).flatMap((v) => integersOf(v, at)),
  ];
  return [...own, ...children];
}

test.serial('every integer a request can carry has a maximum that fits its column and is a safe integer; one over it is 400', async (t) => {
  let seen = 0;
  for (const op of operations.values()) {
    const inQuery = (op.parameters ?? []).filter((p) => p.in !== 'header').flatMap((p) => integersOf(p.schema, [p.name]).map((x) => ({ ...x, where: p.in })));
    const inBody = integersOf(op.requestBody?.content['application/json']?.schema).map((x) => ({ ...x, where: 'body' as const }));
    for (const { at, schema, where } of [...inQuery, ...inBody]) {
      seen++;
      const max = schema.maximum as number | undefined;
      const what = `${op.operationId} ${where} ${at.join('.')}`;
      if (!expect(t, typeof max === 'number', `${what} has no maximum`)) continue;
      // 2,147,483,647 is the largest PostgreSQL integer; 9,007,199,254,740,991 the largest safe JavaScript integer.
      t.true(max! <= 9_007_199_254_740_991, `${what}: ${max} is not a safe integer`);
      if (at.length !== 1) continue;
      const s = passing(op, keyOf(op));
      const over = where === 'query' ? { ...s, query: { [at[0]]: String(max! + 1) } } : { ...s, body: { ...((s.body as object) ?? {}), [at[0]]: max! + 1 } };
      const r = await send(t, op.operationId, over);
      t.is(r.status, 400, `${what} = ${max! + 1}: ${JSON.stringify(r.body).slice(0, 200)}`);
    }
  }
  t.true(seen >= 6, `${seen} integers`);
  // The spend caps and the concurrency cap, named: what PATCH limits answered with 500 (issue 20 §2).
  const limits = integersOf(operations.get('updateCustomerLimits')!.requestBody!.content['application/json'].schema);
  t.deepEqual(Object.fromEntries(limits.map((x) => [x.at.join('.'), x.schema.maximum])), {
    daily_spend_cap_cents: 1_000_000_000_000,
    monthly_spend_cap_cents: 1_000_000_000_000,
    max_concurrent_calls: 2_147_483_647,
  });
});

test.serial('every documented status below 500 of every operation was answered, and nothing else', (t) => {
  for (const op of operations.values()) {
    const documented = Object.keys(op.responses).filter((s) => Number(s) < 500);
    const seen = [...answered.get(op.operationId)!].sort();
    t.deepEqual(seen, documented.sort(), `${op.operationId}: statuses answered vs documented`);
  }
});
