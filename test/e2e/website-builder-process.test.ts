import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cleanUpEverything, makeTempRoot, startSwitchboard, type Instance } from './process-helpers.ts';
import { freshDatabase } from '../helpers/db.ts';
import { client } from '../helpers/http.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { until } from '../helpers/wait.ts';

/**
 * A website build survives the death of the process building it: the build is claimed in the
 * database with a claim that lapses, so a builder in another process takes it over and finishes
 * it, with the fee charged once (issue 15: "surviving a crash mid-build").
 */
const TOKEN = 'sbc_e2e_builder_console_token_Q7rTvB2mXwKp';
test.after.always(cleanUpEverything);

async function start(databaseUrl: string): Promise<Instance> {
  return startSwitchboard({
    dataDir: await makeTempRoot('switchboard-builder-'),
    env: {
      DATABASE_URL: databaseUrl,
      SWITCHBOARD_ROLES: 'api,builder',
      SWITCHBOARD_ADMIN_TOKEN: TOKEN,
      SWITCHBOARD_TEST_CLOCK: '1',
      // The customer's existing website is on this machine.
      SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '1',
      SWITCHBOARD_BUILDER_POLL_MS: '100',
      SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 6).toString('base64'),
    },
  });
}

/** The customer's old website: its first visitor is kept waiting (the build is then mid-way), later ones get the page. */
async function oldWebsite() {
  let visits = 0;
  const server = http.createServer((_req, res) => {
    visits++;
    if (visits === 1) return; // never answered: the builder is stuck researching when it dies
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      `<!doctype html><html><head><title>Harbour Dental | Leeds</title><meta name="description" content="A friendly family dental practice by the harbour in Leeds, open late on Thursdays."></head>
       <body><h2>Our services</h2><ul><li>Check-ups</li><li>Hygiene appointments</li><li>Emergency dental care</li></ul><a href="tel:+441134960111">0113 496 0111</a></body></html>`,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    visits: () => visits,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

test.serial('a builder killed mid-build: another process takes the build over once its claim lapses and finishes it; the fee is charged once', async (t) => {
  const databaseUrl = await freshDatabase();
  const site = await oldWebsite();
  const a = await start(databaseUrl);
  const con = client(a.url, TOKEN);
  const account = (await con.post('/admin/v1/accounts', { name: 'Sites Agency', country: 'GB' })).body;
  const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'k' })).body;
  const api = client(a.url, key.secret);
  const customer = (await api.post('/v1/customers', { name: 'Harbour Dental', country: 'GB', website_url: site.url })).body;
  const order = await api.post(`/v1/customers/${customer.id}/websites`, {});
  t.is(order.status, 202, order.text);
  await until('the builder to start reading the old website', () => site.visits() === 1);
  await a.stop('SIGKILL');

  const b = await start(databaseUrl);
  const api2 = client(b.url, key.secret);
  const con2 = client(b.url, TOKEN);
  const build = async () => (await api2.get(`/v1/customers/${customer.id}/websites/${order.body.id}`)).body;
  t.is((await build()).status, 'building', 'the dead builder still holds it');
  // Its claim lapses two minutes after it was taken; then the build is anyone's again.
  await con2.post('/admin/v1/test_clock/advance', { seconds: 3 * 60 });
  await until('the build to be finished by the other process', async () => (await build()).status === 'ready', 20_000);
  t.is(site.visits(), 2, 'the old website read again by the new builder');
  const page = await fetch((await build()).preview_url);
  t.is(page.status, 200);
  const html = await page.text();
  t.regex(html, /Harbour Dental/);
  t.regex(html, /Emergency dental care/, "what the old website lists");
  t.regex(html, /tel:\+441134960111/);
  const fees = (await api2.get(`/v1/usage?customer_id=${customer.id}`)).body.data.filter((l: any) => l.cause === 'website_build');
  t.is(fees.length, 1, 'charged once');
  t.true(b.logs().some((l) => l.msg === 'website built'));
  t.deepEqual(await checkMoneyInvariants(databaseUrl), []);
  await b.stop('SIGTERM');
  await site.close();
});
