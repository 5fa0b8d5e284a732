import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { createSiteBuilder } from '../actors/websites/site-builder.ts';
import { createDeterministicCopywriter } from '../actors/websites/copywriter.ts';
import type { BuildInput } from '../actors/websites/websites.ts';
import { cleanUpEverything, freePort, makeTempRoot, ROOT, startSwitchboard } from '../test/e2e/process-helpers.ts';
import { client } from '../test/helpers/http.ts';
import { load, ratio } from './lib.ts';

const BUILDS = 20_000;
const ADMIN_TOKEN = 'sbc_bench_websites_token_3kQz9VfLr2Tn8xWp';
const BRIEF = 'Family dental practice in Leeds. Check-ups, hygiene and emergency appointments; evening hours on Thursdays.';

/** Customers as a builder sees them, varied (names, countries, languages, briefs), none with a website to read: no network. */
function inputs(n: number): BuildInput[] {
  const places = [
    { country: 'GB', locale: 'en-GB', phone: '+441134960000', brief: BRIEF },
    { country: 'US', locale: 'en-US', phone: '+12025550123', brief: 'Neighbourhood bakery: sourdough, pastries and custom cakes; open from 7 am.' },
    { country: 'DE', locale: 'de-DE', phone: null, brief: 'Eine kleine Zahnarztpraxis am Hafen. Kontrolluntersuchungen, Prophylaxe und Notfallbehandlung.' },
  ];
  return Array.from({ length: n }, (_, i) => {
    const p = places[i % places.length];
    return {
      customer: { id: `bench-${i}`, name: `Business ${i}`, brand_name: i % 2 ? `Brand ${i}` : null, country: p.country, website_url: null, mode: i % 4 ? 'live' : 'test' },
      locale: p.locale,
      resellerName: 'Bench Agency',
      phoneE164: p.phone,
      brief: p.brief,
      revisionBriefs: i % 5 ? [] : ['Mention free parking behind the building.'],
    };
  });
}

/**
 * Builds per minute with the deterministic composer: the production site builder (createSiteBuilder
 * with the deterministic copywriter, as without OPENAI_API_KEY) making BUILDS pages in this
 * process, one after another as one builder does.
 */
async function buildsPerMinute() {
  const log = createLogger('warn');
  const config = loadConfig({ PORT: '0', DATABASE_URL: 'postgres://bench@127.0.0.1:1/unused', SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN });
  const builder = createSiteBuilder({ config, log }, { copywriter: createDeterministicCopywriter() });
  const all = inputs(BUILDS);
  for (const input of all.slice(0, 200)) await builder.build(input); // warm-up
  let bytes = 0;
  const t0 = performance.now();
  for (const input of all) {
    const r = await builder.build(input);
    if (!r.ok) throw new Error(`a bench build failed: ${r.reason}`);
    bytes += Buffer.byteLength(r.html);
  }
  const ms = performance.now() - t0;
  return { builds: BUILDS, ms: Math.round(ms), buildsPerMinute: Math.round((BUILDS / ms) * 60_000), meanBytes: Math.round(bytes / BUILDS) };
}

/** The baseline: @fastify/static serving `file` in a process of its own. */
async function startStatic(file: string) {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(ROOT, 'bench', 'static-site-server.mjs')], { cwd: ROOT, env: { ...process.env, PORT: String(port), FILE: file }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => String(d).includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`static server exited ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/${path.basename(file)}`,
    pid: child.pid!,
    stop: () => new Promise<void>((resolve) => {
      child.on('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

/**
 * Websites (issue 15): (a) builds per minute with the deterministic composer; (b) a live site's
 * requests per second, served by the real program (its own embedded PostgreSQL) at
 * `/sites/<slug>/`, against @fastify/static serving the same bytes from a file, in the same run.
 */
export async function websitesBench(seconds: number) {
  const builds = await buildsPerMinute();

  const dataDir = await makeTempRoot('switchboard-bench-');
  let sb: Awaited<ReturnType<typeof startSwitchboard>> | undefined;
  let baselineServer: Awaited<ReturnType<typeof startStatic>> | undefined;
  try {
    sb = await startSwitchboard({ dataDir, env: { SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN }, stdoutFile: path.join(dataDir, 'switchboard.log') });
    const con = client(sb.url, ADMIN_TOKEN);
    const account = (await con.post('/admin/v1/accounts', { name: 'Bench', country: 'GB' })).body;
    const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'bench' })).body;
    const api = client(sb.url, key.secret);
    const customer = (await api.post('/v1/customers', { name: 'Bright Dental', country: 'GB' })).body;
    const order = (await api.post(`/v1/customers/${customer.id}/websites`, { brief: BRIEF })).body;
    await con.post('/admin/v1/website_builder/run');
    const live = await api.post(`/v1/customers/${customer.id}/websites/${order.id}/publish`, {});
    if (live.status !== 200) throw new Error(`publish: ${live.status} ${live.text}`);
    const siteUrl = live.body.url as string;
    const page = await fetch(siteUrl);
    const html = Buffer.from(await page.arrayBuffer());
    if (page.status !== 200) throw new Error(`the site answered ${page.status}`);
    const file = path.join(dataDir, 'site.html');
    await fs.writeFile(file, html);

    baselineServer = await startStatic(file);
    const same = Buffer.from(await (await fetch(baselineServer.url)).arrayBuffer());
    if (!same.equals(html)) throw new Error('the baseline does not serve the same bytes');
    const baseline = await load(baselineServer.url, { seconds, serverPid: baselineServer.pid });
    await baselineServer.stop();
    baselineServer = undefined;

    const subject = await load(siteUrl, { seconds, serverPid: sb.pid });
    return {
      name: 'websites: builds per minute; live site GET vs @fastify/static',
      builds,
      pageBytes: html.length,
      baseline,
      subject,
      summary:
        `websites: ${builds.buildsPerMinute} builds/min with the deterministic composer (${builds.builds} pages in ${builds.ms} ms, mean ${builds.meanBytes} bytes); ` +
        `a live site (${html.length} bytes) ${subject.requestsPerSecond} req/s (p99 ${subject.p99Ms} ms) vs @fastify/static serving the same bytes ` +
        `${baseline.requestsPerSecond} req/s (p99 ${baseline.p99Ms} ms): ${ratio(subject.requestsPerSecond, baseline.requestsPerSecond)} of baseline; ` +
        `CPU per request: site ${subject.cpu?.nodeMicros} µs server + ${subject.cpu?.postgresMicros} µs PostgreSQL, static ${baseline.cpu?.nodeMicros} µs` +
        `${subject.non2xx || subject.errors || baseline.non2xx || baseline.errors ? `; non-2xx/errors: site ${subject.non2xx}/${subject.errors}, static ${baseline.non2xx}/${baseline.errors}` : ''}`,
    };
  } finally {
    // Also when start-up failed: nothing the benchmark started may outlive it.
    await baselineServer?.stop().catch(() => {});
    await sb?.stop('SIGTERM').catch(() => {});
    await cleanUpEverything();
  }
}
