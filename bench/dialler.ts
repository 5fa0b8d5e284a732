import pg from 'pg';
import { cleanUpEverything, makeTempRoot, startSwitchboard, type Instance } from '../test/e2e/process-helpers.ts';
import { client } from '../test/helpers/http.ts';
import { ADMIN_TOKEN } from '../test/helpers/service.ts';
import { advanceToNext, makeReadyCustomer } from '../test/helpers/calls.ts';
import { startEmbeddedDatabase } from '../runtime/embedded-db.ts';
import { createLogger } from '../runtime/logger.ts';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * The dialler across 4 processes on one PostgreSQL: queued requests claimed and started per
 * second (simulated calls, the full gate path), and a check that no request was dialled twice.
 * The numbers end in 2 (simulated: no answer), so the figure measures dialling, not talking.
 */
export async function diallerBench(requests = 1000) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'switchboard-bench-dialler-'));
  const db = await startEmbeddedDatabase(dir, createLogger('warn'));
  // makeReadyCustomer drives the console with the test helpers' token.
  const token = ADMIN_TOKEN;
  const env = {
    DATABASE_URL: db.url,
    SWITCHBOARD_ADMIN_TOKEN: token,
    SWITCHBOARD_TEST_CLOCK: '1',
    SWITCHBOARD_DIALLER_POLL_MS: '3600000',
    SWITCHBOARD_MAX_CALLS: '1000',
    LOG_LEVEL: 'info',
    SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
  };
  const processes: Instance[] = [];
  try {
    for (let i = 0; i < 4; i++) processes.push(await startSwitchboard({ dataDir: await makeTempRoot('switchboard-bench-'), env }));
    const url = processes[0].url;
    const con = client(url, token);
    const account = (await con.post('/admin/v1/accounts', { name: 'Dialler Bench', country: 'US' })).body;
    await con.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 100_000_000, burst: 100_000_000, concurrent_calls: 100_000 });
    const key = (await con.post(`/admin/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'bench' })).body;
    const api = client(url, key.secret);
    const customer = await makeReadyCustomer(url, api);
    await advanceToNext({ id: account.id, testKey: key.secret, testKeyId: key.id, api, admin: con }, 2, 15);
    for (let i = 0; i < requests; i += 50) {
      await Promise.all(
        // Line numbers 0xx2: business landlines in test mode (no consent needed, README), no answer.
        Array.from({ length: Math.min(50, requests - i) }, (_, j) => {
          const n = String(i + j).padStart(3, '0');
          return api.post('/v1/calls', { called_party: 'business', customer_id: customer.id, phone: `+12025${n.slice(0, 2)}0${n[2]}02` });
        }),
      );
    }
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const queued = Number((await pool.query(`SELECT count(*) FROM calls WHERE status = 'queued'`)).rows[0].count);
    const started = performance.now();
    // Every process runs dialler rounds as fast as it can until the queue is empty.
    await Promise.all(
      processes.map(async (p) => {
        const c = client(p.url, token);
        for (;;) {
          const left = Number((await pool.query(`SELECT count(*) FROM calls WHERE status = 'queued'`)).rows[0].count);
          if (left === 0) return;
          await c.post('/admin/v1/dialler/run');
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const dialled = Number((await pool.query(`SELECT count(*) FROM calls WHERE dialed_at IS NOT NULL`)).rows[0].count);
    const twice = Number((await pool.query(`SELECT count(*) FROM calls WHERE attempts > 1 AND dialed_at IS NOT NULL`)).rows[0].count);
    const byProcess = (await pool.query(`SELECT claimed_by, count(*)::int AS n FROM calls WHERE dialed_at IS NOT NULL GROUP BY claimed_by`)).rows;
    await pool.end();
    return {
      name: 'dialler: 4 processes, one PostgreSQL',
      queued,
      dialled,
      doubleDials: twice,
      seconds,
      perSecond: Math.round(dialled / seconds),
      processes: byProcess.length,
      summary: `dialler: ${dialled} of ${queued} queued requests claimed and started in ${seconds.toFixed(1)} s by 4 processes = ${Math.round(dialled / seconds)}/s; requests dialled more than once: ${twice}; processes that dialled: ${byProcess.length}`,
    };
  } finally {
    for (const p of processes) await p.stop('SIGTERM').catch(() => {});
    await cleanUpEverything();
    await db.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
