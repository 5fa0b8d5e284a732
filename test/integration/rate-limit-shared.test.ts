import test from 'ava';
import { startTestService, type TestService } from '../helpers/service.ts';
import { client } from '../helpers/http.ts';
import { makeAccount } from '../helpers/factories.ts';

/**
 * With several API processes, SWITCHBOARD_RATE_LIMIT_STORE=postgres makes the request limits
 * per account across all of them; the in-process store counts each process's share on its own.
 */
const started: TestService[] = [];
async function twoProcesses(store: 'memory' | 'postgres'): Promise<[TestService, TestService]> {
  const a = await startTestService({ SWITCHBOARD_RATE_LIMIT_STORE: store });
  started.push(a);
  const b = await startTestService({ DATABASE_URL: a.databaseUrl, SWITCHBOARD_RATE_LIMIT_STORE: store });
  started.push(b);
  return [a, b];
}
test.after.always(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

/** Waits out the last seconds of a minute, so that 12 requests fall in one per-minute window. */
async function clearOfMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
}

/** Twelve requests of one account, alternating between the two processes. */
async function alternate(a: TestService, b: TestService) {
  const account = await makeAccount(a.url);
  await account.admin.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 10, burst: 1_000 });
  await clearOfMinuteEdge();
  const replies = [];
  for (let i = 0; i < 12; i++) replies.push(await client((i % 2 ? b : a).url, account.testKey).get('/v1/me'));
  return replies;
}

test.serial('postgres store: one limit over both processes; the 11th request is refused wherever it lands', async (t) => {
  const [a, b] = await twoProcesses('postgres');
  const replies = await alternate(a, b);
  t.deepEqual(replies.map((r) => r.status), [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
  t.deepEqual(replies.slice(0, 10).map((r) => r.headers.get('x-ratelimit-remaining')), ['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);
  const refused = replies[10];
  t.is(refused.body.error.code, 'rate_limit_exceeded');
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
  const reset = Number(refused.headers.get('x-ratelimit-reset'));
  t.is(reset % 60, 0, 'a per-minute window ends on the minute');
});

test.serial('postgres store: both windows counted by one statement stay exact under concurrent requests on both processes', async (t) => {
  const [a, b] = await twoProcesses('postgres');
  const account = await makeAccount(a.url);
  // The 10-second window refuses here: 40 requests at once, half on each process, against a burst of 15.
  await account.admin.patch(`/admin/v1/accounts/${account.id}/limits`, { requests_per_minute: 1_000, burst: 15 });
  await clearOfMinuteEdge();
  const intoWindow = Date.now() % 10_000;
  if (intoWindow > 5_000) await new Promise((r) => setTimeout(r, 10_200 - intoWindow));
  const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => client((i % 2 ? b : a).url, account.testKey).get('/v1/me')));
  const statuses = replies.map((r) => r.status);
  t.is(statuses.filter((s) => s === 200).length, 15);
  t.is(statuses.filter((s) => s === 429).length, 25);
  const refused = replies.find((r) => r.status === 429)!;
  t.is(refused.headers.get('x-ratelimit-limit'), '15', 'the burst window refused');
  t.is(Number(refused.headers.get('x-ratelimit-reset')) % 10, 0, 'a 10-second window ends on a multiple of ten seconds');
  // The per-minute window counted every one of them, refused or not: seen once the burst window ends.
  const minute = Math.floor(Date.now() / 60_000);
  await new Promise((r) => setTimeout(r, 10_100 - (Date.now() % 10_000)));
  const next = await client(a.url, account.testKey).get('/v1/me');
  t.is(next.status, 200);
  if (Math.floor(Date.now() / 60_000) === minute) t.is(next.headers.get('x-ratelimit-remaining'), String(1_000 - 41));
});

test.serial('memory store: each process counts its own share (the documented single-process default)', async (t) => {
  const [a, b] = await twoProcesses('memory');
  const replies = await alternate(a, b);
  t.deepEqual([...new Set(replies.map((r) => r.status))], [200]);
});

test.serial('the purge job forgets ended windows, not the current one', async (t) => {
  const [a] = await twoProcesses('postgres');
  const con = (await makeAccount(a.url)).admin;
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: a.databaseUrl });
  await db.connect();
  try {
    await db.query(
      `INSERT INTO rate_limit_windows (key, window_start, count) VALUES ('m:old', now() - interval '1 hour', 3), ('m:now', date_trunc('minute', now()), 2)`,
    );
    const run = await con.post('/admin/v1/jobs/purge_rate_limit_windows/run');
    t.is(run.status, 200);
    t.is(run.body.processed, 1);
    const left = (await db.query(`SELECT key FROM rate_limit_windows WHERE key LIKE 'm:%' AND length(key) < 6 ORDER BY key`)).rows.map((r) => r.key);
    t.deepEqual(left, ['m:now']);
  } finally {
    await db.end();
  }
});
