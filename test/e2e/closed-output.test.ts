/**
 * The reader of the command's output goes away (`switchboard admin … | head`, a log shipper
 * that dies): a one-shot command exits quietly, and `start` keeps serving; neither prints a stack
 * trace.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { BIN, childEnv, cleanUpEverything, makeTempRoot, ROOT, spawnSwitchboard } from './process-helpers.ts';
import { startTestService, ADMIN_TOKEN, type TestService } from '../helpers/service.ts';
import { adminClient } from '../helpers/factories.ts';
import { freshDatabase } from '../helpers/db.ts';

let svc: TestService;
test.before(async () => {
  svc = await startTestService();
});
test.after.always(async () => {
  await svc?.stop();
  await cleanUpEverything();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STACK = /\n\s+at |EPIPE|Unhandled 'error'/;

/** Runs the command with its stdout closed before it writes anything; its exit code and stderr. */
function withStdoutClosed(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

test('admin output into a reader that has gone: exit 0, nothing on stderr', async (t) => {
  const env = { SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN, SWITCHBOARD_URL: svc.url };
  for (const args of [['admin'], ['admin', 'list-accounts']]) {
    const { code, stderr } = await withStdoutClosed(args, env);
    t.is(code, 0, `${args.join(' ')}: ${stderr}`);
    t.is(stderr, '', args.join(' '));
  }
});

test('switchboard admin list-accounts | head -n 1: the first line, then a quiet exit 0', async (t) => {
  // More output than a pipe holds, so the command is still writing when head has gone.
  const con = adminClient(svc.url);
  await Promise.all(Array.from({ length: 100 }, (_, i) => con.post('/admin/v1/accounts', { name: `Piped Agency ${i} ${'x'.repeat(180)}`, country: 'US' })));
  const printed = JSON.stringify((await con.get('/admin/v1/accounts')).body, null, 2).length;
  t.true(printed > 90 * 1024, `${printed} bytes: well over what the pipe (64 KiB) and head's first read (8 KiB) take`);
  const script = `"${process.execPath}" "${BIN}" admin list-accounts 2>"$ERR" | head -n 1; echo "status=\${PIPESTATUS[0]}"`;
  const dir = await makeTempRoot('switchboard-pipe-');
  const child = spawn('bash', ['-c', script], {
    cwd: ROOT,
    env: childEnv({ SWITCHBOARD_ADMIN_TOKEN: ADMIN_TOKEN, SWITCHBOARD_URL: svc.url, ERR: `${dir}/stderr` }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  await new Promise((resolve) => child.on('exit', resolve));
  const stderr = readFileSync(`${dir}/stderr`, 'utf8');
  t.is(out, '{\nstatus=0\n', `stderr:\n${stderr}`);
  t.is(stderr, '');
});

test('start keeps serving when its stdout goes away, and stops cleanly without a stack trace', async (t) => {
  // No admin token in the environment: start prints a new one, into the closed pipe.
  const instance = await spawnSwitchboard({ dataDir: await makeTempRoot('switchboard-closed-'), env: { DATABASE_URL: await freshDatabase() } });
  instance.child.stdout!.destroy();
  const deadline = Date.now() + 30_000;
  let answered = false;
  while (!answered && Date.now() < deadline && instance.isRunning()) {
    answered = await fetch(`${instance.url}/healthz`).then((r) => r.ok, () => false);
    if (!answered) await sleep(50);
  }
  t.true(answered, `answers with its stdout gone\n${instance.stderr()}`);
  // Log lines of requests go to the closed pipe too (a /healthz answered 200 logs at debug, an
  // unknown path's 404 at info).
  for (let i = 0; i < 20; i++) t.is((await fetch(`${instance.url}/healthz`)).status, 200);
  for (let i = 0; i < 20; i++) t.is((await fetch(`${instance.url}/nowhere`)).status, 404);
  t.true(instance.isRunning());
  const exit = await instance.stop('SIGTERM');
  t.is(exit.code, 0, instance.stderr());
  t.false(STACK.test(instance.stderr()), instance.stderr());
});
