// The allocation sites of a sampled heap profile (bench/heap-sample-preload.mjs): by the function that
// allocated (self) and by the innermost frame of this project on its stack. node bench/heap-top.mjs <file> [n]
import fs from 'node:fs';
const p = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const self = new Map(), appFrame = new Map();
let total = 0;
function walk(node, stack) {
  const f = node.callFrame;
  const name = `${f.functionName || '(anon)'} ${(f.url || '').replace(/^.*\/(node_modules\/)?/, '')}:${f.lineNumber + 1}`;
  const st = [...stack, { name, url: f.url || '' }];
  if (node.selfSize) {
    total += node.selfSize;
    self.set(name, (self.get(name) ?? 0) + node.selfSize);
    // innermost frame from the project (not node_modules, not node:)
    const app = [...st].reverse().find((s) => s.url.includes('/work/') && !s.url.includes('node_modules'));
    const k = app ? app.name : '(no app frame)';
    appFrame.set(k, (appFrame.get(k) ?? 0) + node.selfSize);
  }
  for (const c of node.children) walk(c, st);
}
walk(p.head, []);
const top = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 25)).map(([k, v]) => `${(v / 1024).toFixed(0).padStart(7)} KB  ${k}`).join('\n');
console.log(`live sampled total ${(total / 1024).toFixed(0)} KB\n-- self --\n${top(self)}\n-- innermost app frame --\n${top(appFrame)}`);
