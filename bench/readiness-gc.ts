// Where readiness's garbage goes, beside the baseline's (issue 25 §4, docs/decisions.md "Issue 25 §4,
// round 33: what readiness keeps alive (h-http2)"). Not part of `npm run bench`: run it alone,
//   BENCH_HEAP_DIR=<dir> ROUNDS=2 S=5 node --import tsx bench/readiness-gc.ts
// The service and the bare route (bench/readiness-baseline-server.ts) run with V8's GC trace
// (bench/gc-trace-preload.mjs) and its sampling heap profiler (bench/heap-sample-preload.mjs); each is
// loaded in turns with autocannon (32 connections, S seconds) and for each run it prints requests a
// second, server CPU a request and the scavenges of that run: how many, their mean pause, what
// survived and was promoted each time, and the parts of the pause. The live heap samples of each
// process's first run go to <dir>/heap-<pid>-1.json: `node bench/heap-top.mjs <file>` names the
// allocation sites of what was still alive (survived) at the end of the run.
import path from 'node:path';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import { makeTempRoot, postgresProcessesFor, ROOT, startSwitchboard, cleanUpEverything } from '../test/e2e/process-helpers.ts';
import { client } from '../test/helpers/http.ts';
import { createLogger } from '../runtime/logger.ts';
import { startEmbeddedDatabase } from '../runtime/embedded-db.ts';
import { load } from './lib.ts';

const seconds = Number(process.env.S ?? 5);
const outDir = path.resolve(process.env.BENCH_HEAP_DIR ?? (await fs.promises.mkdtemp('/tmp/readiness-gc-')));
fs.mkdirSync(outDir, { recursive: true });
const preloads = `--import=${path.join(ROOT, 'bench', 'gc-trace-preload.mjs')} --import=${path.join(ROOT, 'bench', 'heap-sample-preload.mjs')}`;
const dataDir = await makeTempRoot('switchboard-bench-');
const db = await startEmbeddedDatabase(path.join(dataDir, 'db'), createLogger('warn'));
const postgresPid = postgresProcessesFor(path.join(dataDir, 'db'))[0]?.pid;
const svcOut = path.join(outDir, 'service.log');
const sb = await startSwitchboard({ dataDir, env: { DATABASE_URL: db.url, SWITCHBOARD_DB_POOL_SIZE: '20', SWITCHBOARD_ADMIN_TOKEN: 'sbc_bench_readiness_token_UfUfhL8VxIU4', NODE_OPTIONS: preloads, BENCH_HEAP_DIR: outDir }, stdoutFile: svcOut, timeoutMs: 120_000 });
try {
  const con = client(sb.url, 'sbc_bench_readiness_token_UfUfhL8VxIU4');
  const account = (await con.post('/admin/v1/accounts', { name: 'Bench', country: 'US' })).body;
  await con.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 100_000_000, burst: 100_000_000 });
  const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'bench' })).body;
  const customer = (await client(sb.url, key.secret).post('/v1/customers', { name: 'Bench Customer' })).body;
  const p = `/v1/customers/${customer.id}/readiness`;
  const headers = { authorization: `Bearer ${key.secret}` };
  const port = 39000 + Math.floor(Math.random() * 1000);
  const bareOut = fs.openSync(path.join(outDir, 'bare.log'), 'w');
  const bare = spawn(process.execPath, [...preloads.split(' '), '--import', 'tsx', path.join(ROOT, 'bench', 'readiness-baseline-server.ts')], { cwd: ROOT, env: { ...process.env, BENCH_HEAP_DIR: outDir, DATABASE_URL: db.url, POOL_SIZE: '20', PORT: String(port) }, stdio: ['ignore', bareOut, 'inherit'] });
  await new Promise((r) => setTimeout(r, 4000));
  const gc = (file: string, from: number, requests: number) => {
    const txt = fs.readFileSync(file, 'utf8').slice(from);
    const sc = txt.split('\n').filter((l) => l.includes('gc=s ') || l.includes('gc=s,') || /\bgc=s\b/.test(l));
    const num = (l: string, k: string) => Number((l.match(new RegExp(`[ ]${k.replace(/\./g, '\\.')}=([0-9.]+)`)) ?? [])[1] ?? 0);
    const n = sc.length;
    const avg = (k: string) => (n ? sc.reduce((s, l) => s + num(l, k), 0) / n : 0);
    const mc = txt.split('\n').filter((l) => /\bgc=(mc|mmc|ms)\b/.test(l)).length;
    const perRequest = (k: string) => (n * avg(k)) / requests;
    const perReq = `a request: ${(perRequest('allocated') / 1024).toFixed(1)} KB allocated, ${(perRequest('new_space_survived') / 1024).toFixed(2)} KB survived, ${(perRequest('promoted') / 1024).toFixed(2)} KB promoted, ${(perRequest('pause') * 1000).toFixed(1)} µs of scavenge pause`;
    return `${perReq}; scavenges ${n} avg pause ${avg('pause').toFixed(2)} ms, survived ${(avg('new_space_survived') / 1024).toFixed(0)} KB, promoted ${(avg('promoted') / 1024).toFixed(0)} KB, allocated ${(avg('allocated') / 1024).toFixed(0)} KB, survive rate ${avg('new_space_survive_rate_').toFixed(1)}%, ms: roots ${avg('scavenge.roots').toFixed(2)} parallel ${avg('scavenge.parallel').toFixed(2)} weak ${(avg('scavenge.weak_global_handles.identify')+avg('scavenge.weak_global_handles.process')+avg('heap.external_weak_global_handles')).toFixed(2)} ext ${(avg('heap.external.prologue')+avg('heap.external.epilogue')).toFixed(2)} safepoint ${avg('time_to_safepoint').toFixed(2)} sweep_ab ${avg('scavenge.sweep_array_buffers').toFixed(2)} nodes_copied ${avg('nodes_copied_in_new').toFixed(0)} nodes_promoted ${avg('nodes_promoted').toFixed(0)} nodes_died ${avg('nodes_died_in_new').toFixed(0)}; mark-compacts ${mc}`;
  };
  for (let i = 0; i < Number(process.env.ROUNDS ?? 2); i++) {
    for (const [name, url, h, pid, file] of [['bare', `http://127.0.0.1:${port}${p}`, undefined, bare.pid!, path.join(outDir, 'bare.log')], ['service', `${sb.url}${p}`, headers, sb.pid, svcOut]] as const) {
      await load(url, { seconds: 1, warmUpSeconds: 0, headers: h });
      const from = fs.statSync(file).size;
      process.kill(pid, 'SIGUSR2');
      const r = await load(url, { seconds, warmUpSeconds: 0, headers: h, serverPid: pid, postgresPid });
      process.kill(pid, 'SIGUSR2');
      await new Promise((r) => setTimeout(r, 1500));
      console.log(`${name} (pid ${pid}): ${r.requestsPerSecond} req/s, ${r.cpu?.nodeMicros} µs/req server; ${gc(file, from, r.requestsPerSecond * seconds)}`);
    }
  }
  bare.kill('SIGTERM');
} finally {
  await sb.stop('SIGTERM').catch(() => {});
  await db.stop().catch(() => {});
  await cleanUpEverything();
}
