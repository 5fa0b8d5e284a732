import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';

/**
 * A fresh `npm ci` warns EBADENGINE for any locked package whose `engines.node` excludes the Node
 * the project supports (issue 11 §8: cookie@2 wanted Node 22). Every locked package must accept
 * the running Node and the oldest one package.json allows.
 */
test('every locked package accepts the supported Node versions (no EBADENGINE on npm ci)', (t) => {
  const root = path.resolve(import.meta.dirname, '..', '..');
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const oldest = semver.minVersion(manifest.engines.node)!.version;
  const refused: string[] = [];
  for (const [where, pkg] of Object.entries<any>(lock.packages)) {
    const range = pkg.engines?.node;
    if (!where || typeof range !== 'string') continue;
    for (const node of [process.version, oldest]) {
      if (!semver.satisfies(node, range, { includePrerelease: true })) refused.push(`${where.replace(/^.*node_modules\//, '')}@${pkg.version} wants node ${range}, not ${node}`);
    }
  }
  t.deepEqual(refused, []);
});
