import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, type TestAccount } from '../helpers/factories.ts';
import { advanceToNext, dialUntilFinished, makeReadyCustomer } from '../helpers/calls.ts';
import { prospectNotesOf } from '../../actors/call/prospect-notes.ts';
import { deterministicFindings, notesOf, RESEARCH_WAIT_MS } from '../../actors/call/prospect-research.ts';

/**
 * Issue 23 §6: the request's `website_url` is researched once before the first dial, through the
 * SSRF guard; the findings go to the agent, never to the API; 4 cents as a `prospect` line,
 * exactly once, and nothing when research fails.
 */
let svc: TestService;
let account: TestAccount;
let site: http.Server;
let siteUrl: string;
let db: pg.Client;
let customerId: string;
let phoneSeq = 0;
let slowAsked = 0;
let serveSlow: () => void = () => {};
const slowServed = new Promise<void>((r) => (serveSlow = r));

const PAGE = `<!doctype html><html><head><title>Zebrafish Grooming | Dog salon</title>
<meta name="description" content="Zebrafish Grooming washes, trims and pampers dogs of every size.">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"LocalBusiness","name":"Zebrafish Grooming",
"address":{"@type":"PostalAddress","streetAddress":"12 Kennel Road","addressLocality":"Springfield","addressRegion":"IL","postalCode":"62701","addressCountry":"US"},
"openingHours":["Mo-Fr 08:00-18:00","Sa 09:00-13:00"]}</script></head>
<body><h1>Zebrafish Grooming</h1><p>Dog grooming in Springfield.</p></body></html>`;

test.before(async () => {
  site = http.createServer((req, res) => {
    if (req.url === '/empty') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body></body></html>');
    } else if (req.url === '/missing') {
      res.writeHead(404).end();
    } else if (req.url === '/slow') {
      // Answered only when the test lets it (slowServed): a research in flight for as long as the test wants.
      slowAsked++;
      void slowServed.then(() => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
    } else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  svc = await startTestService({ SWITCHBOARD_DIALLER_POLL_MS: '3600000' });
  account = await makeAccount(svc.url);
  db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  customerId = (await makeReadyCustomer(svc.url, account.api)).id;
  // Tuesday 15:00 UTC: 10:00 or 11:00 in New York, inside the calling window.
  await advanceToNext(account, 2, 15);
});
test.after.always(async () => {
  await db?.end();
  await svc?.stop();
  site?.close();
});

const nextPhone = () => `+1202555${String(1100 + ++phoneSeq).padStart(4, '0')}`;
const queue = (websiteUrl: string | undefined, extra: Record<string, unknown> = {}) =>
  account.api.post('/v1/calls', { called_party: 'business', customer_id: customerId, phone: nextPhone(), business_name: 'Zebrafish Grooming', ...(websiteUrl ? { website_url: websiteUrl } : {}), ...extra });
const prospectLines = async (reference: string) =>
  (await db.query(`SELECT amount_cents, applied, type, description FROM ledger_entries WHERE cause = 'prospect' AND reference = $1`, [reference])).rows;
const researchOf = async (id: string) => (await db.query(`SELECT status, notes, failure FROM prospect_research WHERE request_id = $1`, [id])).rows[0];

test.serial('a request with a website: the dialler waits for research, the findings reach the agent, 4 cents as one prospect line, nothing in the API', async (t) => {
  const queued = await queue(`${siteUrl}/`);
  t.is(queued.status, 201);
  const id = queued.body.id;
  t.false('website_url' in queued.body, 'the request does not echo the website');

  // Research pending: the dialler does not dial, the request waits for it.
  await account.admin.post('/admin/v1/dialler/run');
  const waiting = await account.api.get(`/v1/calls/${id}`);
  t.is(waiting.body.status, 'queued');
  t.is(waiting.body.waiting_reason, 'researching');
  t.is(waiting.body.dialed_at, null);

  t.is(await svc.services.researchNow(), 1);
  const row = await researchOf(id);
  t.is(row.status, 'done');
  t.regex(row.notes, /washes, trims and pampers dogs/);
  t.regex(row.notes, /Mo-Fr 08:00-18:00; Sa 09:00-13:00/);
  t.regex(row.notes, /12 Kennel Road, Springfield, IL 62701/);
  // Researched once: a second round takes nothing.
  t.is(await svc.services.researchNow(), 0);
  t.deepEqual(await prospectLines(id), [{ amount_cents: -4, applied: false, type: 'usage', description: 'Researched prospect' }]);

  // The agent's notes, for every attempt of the request (request_id is the request's id).
  t.is(await prospectNotesOf(svc.services.pool, { id }), row.notes);
  t.is(await prospectNotesOf(svc.services.pool, { id: '00000000-0000-4000-8000-000000000000', request_id: id }), row.notes);

  const done = await dialUntilFinished(account, account.api, id);
  t.truthy(done.dialed_at);
  t.deepEqual((await prospectLines(id)).length, 1, 'the call charged no second prospect line');
  // Once in the whole account, under whatever reference: the first request this account made.
  const all = (await db.query(`SELECT amount_cents FROM ledger_entries WHERE cause = 'prospect' AND account_id = $1`, [account.id])).rows;
  t.deepEqual(all, [{ amount_cents: -4 }], 'one 4-cent prospect line in the account');

  // Never in the API: the call, both lists, the compliance record, the events.
  const answers = [
    await account.api.get(`/v1/calls/${id}`),
    await account.api.get(`/v1/calls?view=requests&limit=100`),
    await account.api.get(`/v1/calls?view=calls&limit=100`),
    await account.api.get(`/v1/calls/${id}/compliance_record`),
    await account.admin.get(`/admin/v1/accounts/${account.id}/events`),
  ];
  for (const answer of answers) {
    t.is(answer.status, 200);
    const text = JSON.stringify(answer.body);
    t.notRegex(text, /pampers|Kennel Road|08:00-18:00/, 'no finding in any API answer');
    t.notRegex(text, /website_url/);
  }
});

test.serial('research that fails charges nothing and lets the call go ahead without findings', async (t) => {
  for (const path of ['/missing', '/empty']) {
    const queued = await queue(`${siteUrl}${path}`);
    await svc.services.researchNow();
    const row = await researchOf(queued.body.id);
    t.is(row.status, 'failed', path);
    t.is(row.notes, null);
    t.deepEqual(await prospectLines(queued.body.id), []);
    t.is(await prospectNotesOf(svc.services.pool, { id: queued.body.id }), null);
    const done = await dialUntilFinished(account, account.api, queued.body.id);
    t.truthy(done.dialed_at, 'dialled without findings');
  }
});

test.serial('blocked addresses are refused by the guard: nothing fetched, nothing charged', async (t) => {
  const allowOnlyTheSite = { allowPrivate: (origin: string) => origin === siteUrl };
  let hits = 0;
  const other = http.createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`;
  try {
    for (const url of [otherUrl, 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/', 'http://10.0.0.7/']) {
      const queued = await queue(url);
      t.is(queued.status, 201, url);
      await svc.services.researchNow(allowOnlyTheSite);
      const row = await researchOf(queued.body.id);
      t.is(row.status, 'failed', url);
      t.regex(row.failure, /refused/, url);
      t.deepEqual(await prospectLines(queued.body.id), []);
      await account.api.post(`/v1/calls/${queued.body.id}/cancel`);
    }
    t.is(hits, 0, 'the blocked server was never reached');
  } finally {
    other.close();
  }
});

test.serial('a website that is not an http(s) URL is refused when queued; a request without one is never researched', async (t) => {
  for (const bad of ['ftp://example.com/', 'not a url', 'http://user:pw@example.com/']) {
    const res = await queue(bad);
    t.is(res.status, 400, bad);
    t.is(res.body.error.code, 'invalid_parameter');
  }
  const plain = await queue(undefined);
  t.is(plain.status, 201);
  t.is(await researchOf(plain.body.id), undefined, 'no website, no research (a business name alone needs a search engine)');
  await account.api.post(`/v1/calls/${plain.body.id}/cancel`);
});

test.serial('research not finished within the wait counts as failed: the call goes ahead, a late finish charges nothing', async (t) => {
  const queued = await queue(`${siteUrl}/`);
  const id = queued.body.id;
  // The research was asked for longer ago than the dialler waits.
  await db.query(`UPDATE prospect_research SET created_at = created_at - $2::interval WHERE request_id = $1`, [id, `${RESEARCH_WAIT_MS + 1000} milliseconds`]);
  const done = await dialUntilFinished(account, account.api, id);
  t.truthy(done.dialed_at);
  t.is((await researchOf(id)).status, 'failed');
  t.is(await svc.services.researchNow(), 0);
  t.deepEqual(await prospectLines(id), []);
});

test.serial('a research the dialler gave up on while the site was still being read: its late finish stores nothing and charges nothing (not 4 cents)', async (t) => {
  const queued = await queue(`${siteUrl}/slow`);
  const id = queued.body.id;
  const researching = svc.services.researchNow();
  for (let i = 0; slowAsked === 0; i++) {
    if (i > 500) throw new Error('the site was never asked');
    await new Promise((r) => setTimeout(r, 10));
  }
  // The dialler's wait runs out while the page is being read: it marks the research failed and goes ahead.
  await db.query(`UPDATE prospect_research SET created_at = created_at - $2::interval WHERE request_id = $1`, [id, `${RESEARCH_WAIT_MS + 1000} milliseconds`]);
  await account.admin.post('/admin/v1/dialler/run');
  t.is((await researchOf(id)).status, 'failed');
  serveSlow();
  await researching;
  t.like(await researchOf(id), { status: 'failed', notes: null });
  t.deepEqual(await prospectLines(id), [], 'no prospect line for a research the call went ahead without');
  await dialUntilFinished(account, account.api, id);
  t.deepEqual(await prospectLines(id), []);
});

test('the deterministic extractor keeps what the site says and nothing else', (t) => {
  const f = deterministicFindings({ title: 'A | B', description: null, services: ['Wash', 'Trim'], phones: [], emails: [], address: null, openingHours: [] });
  t.deepEqual(f, { what_it_does: 'A | B Services: Wash, Trim.', hours: [], locations: [] });
  t.is(notesOf({ what_it_does: null, hours: [], locations: [] }), null);
});

test('with the chat model: the findings are its answer (max_completion_tokens, strict schema); any failure falls back to the deterministic ones', async (t) => {
  const { startFakeOpenAIChat } = await import('../fakes/openai-chat.ts');
  const { createOpenAIExtractor } = await import('../../actors/call/prospect-research.ts');
  const fake = await startFakeOpenAIChat();
  try {
    const extractor = createOpenAIExtractor({ apiKey: fake.apiKey, baseUrl: fake.url, model: 'gpt-test' });
    const site = { title: 'Zebrafish Grooming', description: 'Dog salon.', services: [], phones: [], emails: [], address: '12 Kennel Road, Springfield', openingHours: ['Mo-Fr 08:00-18:00'] };
    fake.script({ reply: JSON.stringify({ what_it_does: 'A dog grooming salon.', hours: ['Weekdays 8 to 6'], locations: ['Springfield'] }) });
    t.deepEqual(await extractor.extract(site), { what_it_does: 'A dog grooming salon.', hours: ['Weekdays 8 to 6'], locations: ['Springfield'] });
    const sent = fake.requests[0].body;
    t.is(typeof sent.max_completion_tokens, 'number');
    t.false('max_tokens' in sent);
    t.deepEqual(fake.violations, []);
    fake.script({ status: 500 }, { status: 500 });
    t.deepEqual(await extractor.extract(site), deterministicFindings(site));
    fake.script({ reply: '{"what_it_does": 3}' });
    t.deepEqual(await extractor.extract(site), deterministicFindings(site));
  } finally {
    await fake.close();
  }
});
