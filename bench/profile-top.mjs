// `node bench/profile-top.mjs <file.cpuprofile> [n]`: the n (default 40) functions with the most
// self time in a V8 CPU profile, and, per file, where the rest of the time went.
import fs from 'node:fs';

const [file, n = '40'] = process.argv.slice(2);
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map();
const counts = new Map();
for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
const total = profile.samples.length;
const byFile = new Map();
for (const [id, count] of counts) {
  const { functionName, url, lineNumber } = byId.get(id).callFrame;
  const key = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*?\/o-perf\//, '')}:${lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + count);
  const where = url ? url.replace(/^.*node_modules\/(@[^/]+\/[^/]+|[^/]+)\/.*$/, '~/$1').replace(/^file:\/\/.*?\/o-perf\//, '') : functionName;
  byFile.set(where, (byFile.get(where) ?? 0) + count);
}
const pct = (c) => `${((c / total) * 100).toFixed(1).padStart(5)} %`;
console.log(`${total} samples`);
for (const [key, c] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(n))) console.log(`${pct(c)}  ${key}`);
console.log('\nby file / package:');
for (const [key, c] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, Number(n))) console.log(`${pct(c)}  ${key}`);
