/**
 * Builds the reseller console (console/, Vite) into console/dist when its sources are newer than
 * the build, so `npm install && npm start` is the whole set-up and nothing built is committed.
 * Run by the `prestart` and `pretest` npm scripts, and by tests that open the console.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));
export const CONSOLE_DIST = path.join(CONSOLE_DIR, 'dist');
/** What the build reads besides console/src: a change to one of these rebuilds too. */
const INPUTS = ['index.html', 'vite.config.ts', 'src'];

function newestMtime(p: string): number {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of fs.readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, entry)));
  return newest;
}

/** Whether console/dist is missing or older than any source of the console. */
export function consoleBuildIsStale(dir = CONSOLE_DIR): boolean {
  const built = newestMtime(path.join(dir, 'dist', 'index.html'));
  if (!built) return true;
  const sources = Math.max(...INPUTS.map((i) => newestMtime(path.join(dir, i))), newestMtime(path.join(dir, '..', 'package-lock.json')));
  return sources > built;
}

let building: Promise<boolean> | null = null;

/** A folder made while a build runs, so test files running side by side build once (a crashed build's is stale after 5 minutes). */
const LOCK = path.join(CONSOLE_DIR, '.build-lock');
const LOCK_STALE_MS = 5 * 60_000;

async function takeLock(): Promise<void> {
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > LOCK_STALE_MS) fs.rmSync(LOCK, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Builds the console if it is stale; true when it built. One build at a time on the machine. */
export function ensureConsoleBuilt(opts: { force?: boolean; quiet?: boolean } = {}): Promise<boolean> {
  if (!opts.force && !consoleBuildIsStale()) return Promise.resolve(false);
  building ??= (async () => {
    await takeLock();
    // Another process may have built it while this one waited.
    if (!opts.force && !consoleBuildIsStale()) {
      fs.rmSync(LOCK, { recursive: true, force: true });
      building = null;
      return false;
    }
    // The production builds of React and React Router, whatever the caller's environment says.
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      const { build } = await import('vite');
      const started = Date.now();
      await build({ configFile: path.join(CONSOLE_DIR, 'vite.config.ts'), mode: 'production', logLevel: opts.quiet ? 'error' : 'warn' });
      if (!opts.quiet) process.stderr.write(`console: built console/dist in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      return true;
    } finally {
      if (previous === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = previous;
      fs.rmSync(LOCK, { recursive: true, force: true });
      building = null;
    }
  })();
  return building;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  ensureConsoleBuilt({ force: process.argv.includes('--force') }).then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`console: the build failed: ${err?.message ?? err}\n`);
      process.exit(1);
    },
  );
}
