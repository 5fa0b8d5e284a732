/**
 * Research of a customer's existing website over real HTTP: local servers on 127.0.0.1 play the
 * customer's site (allowed only with `allowPrivate`, as webhooks to them are), a slow one, a huge
 * one, and redirects elsewhere that the guard must refuse.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { researchSite, RESEARCH_MAX_BYTES } from '../../actors/websites/research.ts';

interface Site {
  origin: string;
  /** Paths requested, in order. */
  hits: string[];
  /** Bytes the handler managed to write before the client went away (set by handlers that count). */
  state: { written: number; closedEarly: boolean };
}

/** A real HTTP server on 127.0.0.1 answering with `handler`; closed when the test ends. */
async function startSite(t: ExecutionContext, handler: (req: http.IncomingMessage, res: http.ServerResponse, site: Site) => void): Promise<Site> {
  const site: Site = { origin: '', hits: [], state: { written: 0, closedEarly: false } };
  const server = http.createServer((req, res) => {
    site.hits.push(req.url ?? '');
    handler(req, res, site);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  site.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return site;
}

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Harbour Dental</title>
<meta name="description" content="A friendly dental practice by the harbour, taking new patients.">
<script type="application/ld+json">{"@type":"Dentist","openingHours":["Mo-Fr 08:30-17:30"],"address":{"streetAddress":"1 Quay St","addressLocality":"Bristol","postalCode":"BS1 4DB"}}</script>
</head><body><h2>Treatments</h2><ul><li>Check-ups</li><li>Hygiene</li></ul><a href="tel:+441134960999">Call</a></body></html>`;

const html = (body: string, type = 'text/html; charset=utf-8') => (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(200, { 'content-type': type }).end(body);

test('a reachable site is read: title, description, services, phone, address, hours', async (t) => {
  const site = await startSite(t, html(PAGE));
  const outcome = await researchSite(`${site.origin}/`, { allowPrivate: true, country: 'GB' });
  if (!outcome.ok) return t.fail(outcome.reason);
  t.is(outcome.finalUrl, `${site.origin}/`);
  t.false(outcome.truncated);
  t.is(outcome.bytes, Buffer.byteLength(PAGE));
  t.deepEqual(outcome.research, {
    title: 'Harbour Dental',
    description: 'A friendly dental practice by the harbour, taking new patients.',
    services: ['Check-ups', 'Hygiene'],
    phones: ['+441134960999'],
    emails: [],
    address: '1 Quay St, Bristol BS1 4DB',
    openingHours: ['Mo-Fr 08:30-17:30'],
  });
});

test('without allowPrivate a loopback site is refused before any request is made', async (t) => {
  const site = await startSite(t, html(PAGE));
  const byAddress = await researchSite(`${site.origin}/`, { allowPrivate: false });
  t.false(byAddress.ok);
  if (!byAddress.ok) t.regex(byAddress.reason, /^refused: address 127\.0\.0\.1 is loopback/);
  const byName = await researchSite(`${site.origin.replace('127.0.0.1', 'localhost')}/`, { allowPrivate: false });
  t.false(byName.ok);
  if (!byName.ok) t.regex(byName.reason, /^refused: localhost is a loopback name/);
  t.deepEqual(site.hits, []);
});

test('only http and https are fetched, without credentials', async (t) => {
  for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'javascript:alert(1)', 'not a url', 'http://user:pw@127.0.0.1/']) {
    const outcome = await researchSite(url, { allowPrivate: true });
    t.false(outcome.ok, url);
  }
});

test('a site that never answers ends at the time limit', async (t) => {
  const site = await startSite(t, () => {
    /* never answers */
  });
  const outcome = await researchSite(`${site.origin}/`, { allowPrivate: true, timeoutMs: 300 });
  t.deepEqual(outcome, { ok: false, reason: 'timed out after 300 ms' });
  t.deepEqual(site.hits, ['/']);
});

test('a site that sends its page a byte at a time ends at the time limit too (the limit is total, not per read)', async (t) => {
  const site = await startSite(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    const timer = setInterval(() => res.write('<p>x</p>'), 50);
    res.on('close', () => clearInterval(timer));
  });
  const outcome = await researchSite(`${site.origin}/`, { allowPrivate: true, timeoutMs: 400 });
  t.deepEqual(outcome, { ok: false, reason: 'timed out after 400 ms' });
});

test('a huge page is read up to the size limit, used, and the rest never downloaded', async (t) => {
  const total = 8 * RESEARCH_MAX_BYTES;
  const site = await startSite(t, (_req, res, s) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.write('<html><head><title>Big Page Bakery</title><meta name="description" content="Bread, cakes and more, baked every morning."></head><body>');
    const filler = Buffer.alloc(64 * 1024, 'a');
    res.on('close', () => (s.state.closedEarly = s.state.written < total));
    const pump = () => {
      while (s.state.written < total) {
        s.state.written += filler.length;
        if (!res.write(filler)) return void res.once('drain', pump);
      }
      res.end('</body></html>');
    };
    pump();
  });
  const outcome = await researchSite(`${site.origin}/`, { allowPrivate: true });
  if (!outcome.ok) return t.fail(outcome.reason);
  t.true(outcome.truncated);
  t.is(outcome.bytes, RESEARCH_MAX_BYTES);
  t.is(outcome.research.title, 'Big Page Bakery');
  t.is(outcome.research.description, 'Bread, cakes and more, baked every morning.');
  // The connection was dropped: the server never got to write the whole page.
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.true(site.state.closedEarly, `server wrote ${site.state.written} of ${total} bytes`);
});

test('redirects are followed, each new address checked by the guard', async (t) => {
  const other = await startSite(t, html(PAGE));
  const site = await startSite(t, (req, res) => {
    if (req.url === '/old') return res.writeHead(301, { location: '/new' }).end();
    if (req.url === '/new') return res.writeHead(302, { location: `${other.origin}/home` }).end();
    if (req.url === '/meta') return res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (req.url === '/file') return res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    if (req.url === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    res.writeHead(404).end();
  });
  // Both local servers allowed: followed to the page, same origin and across.
  const followed = await researchSite(`${site.origin}/old`, { allowPrivate: true });
  if (!followed.ok) return t.fail(followed.reason);
  t.is(followed.finalUrl, `${other.origin}/home`);
  t.is(followed.research.title, 'Harbour Dental');

  // Only the first site's origin may be private: the redirect to the other local server is refused,
  // and that server is never asked.
  other.hits.length = 0;
  const onlyFirst = (origin: string) => origin === site.origin;
  const refused = await researchSite(`${site.origin}/old`, { allowPrivate: onlyFirst });
  t.deepEqual(refused, { ok: false, reason: 'redirect refused: address 127.0.0.1 is loopback' });
  t.deepEqual(other.hits, []);

  const metadata = await researchSite(`${site.origin}/meta`, { allowPrivate: onlyFirst });
  t.deepEqual(metadata, { ok: false, reason: 'redirect refused: address 169.254.169.254 is link-local (includes the cloud metadata address)' });
  const file = await researchSite(`${site.origin}/file`, { allowPrivate: true });
  t.deepEqual(file, { ok: false, reason: 'redirect refused: the URL must use http or https' });
  const loop = await researchSite(`${site.origin}/loop`, { allowPrivate: true });
  t.deepEqual(loop, { ok: false, reason: 'more than 3 redirects' });
  const missing = await researchSite(`${site.origin}/gone`, { allowPrivate: true });
  t.deepEqual(missing, { ok: false, reason: 'the site answered 404' });
});

test('what is not an HTML page is not read', async (t) => {
  const site = await startSite(t, html('%PDF-1.7', 'application/pdf'));
  t.deepEqual(await researchSite(`${site.origin}/`, { allowPrivate: true }), { ok: false, reason: 'not an HTML page (application/pdf)' });
});

test('a page in a legacy charset is decoded by its header or its meta tag', async (t) => {
  const latin1 = Buffer.from('<html><head><meta charset="iso-8859-1"><title>Bäckerei Müller</title></head></html>', 'latin1');
  const byMeta = await startSite(t, (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(latin1));
  const byHeader = await startSite(t, (_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=windows-1252' }).end(latin1));
  for (const site of [byMeta, byHeader]) {
    const outcome = await researchSite(`${site.origin}/`, { allowPrivate: true });
    t.true(outcome.ok && outcome.research.title === 'Bäckerei Müller', JSON.stringify(outcome));
  }
});
