/**
 * A live customer's CalDAV address is typed on its calendar page and asked by the server: it must
 * not be a way into the server's own network (server-side request forgery). Loopback, private,
 * link-local (the cloud metadata address) and names resolving to them are refused before any
 * connection, on the page with the reason; a redirect to one is refused too, the Authorization
 * header is not carried to another origin, and a hostile server's huge or endless answer fails in
 * bounded time and memory. The service here runs with the production default
 * (SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS unset).
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount, makeCustomer } from '../helpers/factories.ts';
import { mintCalendarLink, postCalendarForm } from '../helpers/calendar.ts';
import { caldavCalendar, PRIVATE_ADDRESS_REASON } from '../../calendars/caldav/caldav-calendar.ts';
import { CalendarUnavailable } from '../../calendars/calendar.ts';
import { guardedFetch } from '../../runtime/guarded-fetch.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService({ SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '' });
});
test.after.always(async () => {
  await svc?.stop();
});

/** A local HTTP server that records what reached it and answers as `handler` does. */
async function server(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_q, r) => r.end()) {
  const seen: { method: string; url: string; authorization: string | undefined }[] = [];
  const s = http.createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization });
    handler(req, res);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  return { port, origin: `http://127.0.0.1:${port}`, seen, close: () => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r()))) };
}

const range = [new Date('2031-01-01T00:00:00Z'), new Date('2031-01-02T00:00:00Z')] as const;

test('the calendar page refuses a CalDAV address on loopback, a private network, the metadata address or a name resolving to them, saying why; nothing is asked', async (t) => {
  const inside = await server();
  t.teardown(inside.close);
  const a = await makeAccount(svc.url, { live: true });
  const api = a.liveApi!;
  const c = await makeCustomer(api);
  const link = await mintCalendarLink(api, c.id);
  for (const address of [
    `${inside.origin}/dav/`,
    `http://localhost:${inside.port}/dav/`,
    `http://[::1]:${inside.port}/dav/`,
    `http://2130706433:${inside.port}/dav/`,
    `http://[::ffff:127.0.0.1]:${inside.port}/dav/`,
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/dav/',
    'https://192.168.1.1/dav/',
    'http://0.0.0.0/',
  ]) {
    const posted = await postCalendarForm(link, { connect: 'caldav', url: address, username: 'u', password: 'app-password-ssrf' });
    t.is(posted.status, 422, address);
    // Refused by the address check at connect (before any request), or by the guarded fetch under it for a name that resolves late.
    t.regex(posted.text, /must be one reachable over the internet \(|points to a private or local network, which cannot be used/, address);
  }
  t.deepEqual(inside.seen, [], 'no request reached the inside server');
  t.is((await api.get(`/v1/customers/${c.id}/calendar`)).body.status, 'not_connected');
  t.false(svc.logs.raw.join('\n').includes('app-password-ssrf'), 'the password is never logged');
});

test('a redirect to a private address is refused; the allowed server is asked once', async (t) => {
  const inside = await server();
  t.teardown(inside.close);
  const outside = await server((_req, res) => res.writeHead(307, { location: `${inside.origin}/secret` }).end());
  t.teardown(outside.close);
  // The first server stands in for a public one; every other origin is judged as production does.
  const client = caldavCalendar({ kind: 'caldav', url: `${outside.origin}/dav/`, username: 'u', password: 'p' }, { allowPrivate: (origin) => origin === outside.origin });
  await t.throwsAsync(client.freeBusy(...range), { instanceOf: CalendarUnavailable, message: PRIVATE_ADDRESS_REASON });
  t.true(outside.seen.length >= 1);
  t.deepEqual(inside.seen, []);

  const metadata = await server((_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end());
  t.teardown(metadata.close);
  const viaMetadata = guardedFetch({ allowPrivate: (origin) => origin === metadata.origin, timeoutMs: 2_000, maxBytes: 1_000 });
  await t.throwsAsync(viaMetadata(`${metadata.origin}/`), { message: /169\.254\.169\.254 is link-local/ });
});

test('a redirect to another origin does not carry the user name and password', async (t) => {
  const other = await server((_req, res) => res.end('ok'));
  t.teardown(other.close);
  const first = await server((_req, res) => res.writeHead(307, { location: `${other.origin}/next` }).end());
  t.teardown(first.close);
  const send = guardedFetch({ allowPrivate: true, timeoutMs: 2_000, maxBytes: 1_000 });
  const res = await send(`${first.origin}/`, { method: 'PROPFIND', headers: { authorization: 'Basic dTpw' }, body: '<x/>' });
  t.is(await res.text(), 'ok');
  t.is(first.seen[0]?.authorization, 'Basic dTpw');
  t.like(other.seen[0], { method: 'PROPFIND', url: '/next', authorization: undefined });
});

test('a calendar server answering an endless body or a trickle fails in bounded time and memory', async (t) => {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const endless = await server((_req, res) => {
    res.writeHead(207, { 'content-type': 'application/xml' });
    const pump = () => {
      while (res.write(chunk));
    };
    res.on('drain', pump);
    pump();
  });
  t.teardown(endless.close);
  const big = caldavCalendar({ kind: 'caldav', url: `${endless.origin}/dav/`, username: 'u', password: 'p' }, { allowPrivate: true, maxBytes: 1024 * 1024, timeoutMs: 10_000 });
  const before = process.memoryUsage().rss;
  const started = Date.now();
  await t.throwsAsync(big.freeBusy(...range), { instanceOf: CalendarUnavailable, message: 'the calendar server answered with more than can be read' });
  t.true(Date.now() - started < 5_000, 'stopped reading at the limit');
  t.true(process.memoryUsage().rss - before < 200 * 1024 * 1024);

  const trickle = await server((_req, res) => {
    res.writeHead(207, { 'content-type': 'application/xml' });
    const timer = setInterval(() => res.write(' '), 100);
    res.on('close', () => clearInterval(timer));
  });
  t.teardown(trickle.close);
  const slow = caldavCalendar({ kind: 'caldav', url: `${trickle.origin}/dav/`, username: 'u', password: 'p' }, { allowPrivate: true, timeoutMs: 1_000 });
  const slowStart = Date.now();
  await t.throwsAsync(slow.freeBusy(...range), { instanceOf: CalendarUnavailable });
  t.true(Date.now() - slowStart < 4_000, 'the deadline covers the body');
});

test('a link allows 10 connection attempts with an address and password an hour: the 11th is 429 in place and asks no server; a new link starts again', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const api = a.liveApi!;
  const c = await makeCustomer(api);
  const link = await mintCalendarLink(api, c.id);
  const form = { connect: 'caldav', url: 'http://10.1.2.3/dav/', username: 'owner@example.com', password: 'guess' };
  for (let i = 1; i <= 10; i++) t.is((await postCalendarForm(link, form)).status, 422, `attempt ${i}`);
  const refused = await postCalendarForm(link, form);
  t.is(refused.status, 429);
  t.regex(refused.text, /Too many attempts on this link\. Wait an hour and try again\./);
  t.regex(refused.text, /value="owner@example\.com"/, 'what was typed is kept, never the password');
  t.is((await postCalendarForm(await mintCalendarLink(api, c.id), form)).status, 422, 'a new link counts on its own');
});

test('an address or user name longer than 500 characters is refused as typed, never cut and connected', async (t) => {
  const a = await makeAccount(svc.url, { live: true });
  const api = a.liveApi!;
  const link = await mintCalendarLink(api, (await makeCustomer(api)).id);
  const long = `https://calendar.example/${'a'.repeat(480)}/private-part/`;
  const posted = await postCalendarForm(link, { connect: 'caldav', url: long, username: 'u', password: 'p' });
  t.is(posted.status, 400);
  t.regex(posted.text, /Fill in the calendar(&#39;|')s address/);
  t.is((await postCalendarForm(link, { connect: 'caldav', url: 'https://calendar.example/', username: 'u'.repeat(501), password: 'p' })).status, 400);
});
