// Loaded with `--import` into a process under a benchmark (BENCH_HEAP_DIR=<dir>, bench/readiness-gc.ts).
// Each SIGUSR2 toggles V8's sampling heap profiler: the first starts it, the next writes the
// samples still alive to <dir>/heap-<pid>-<n>.json (read it with bench/heap-top.mjs). Alive at the
// stop means not yet collected: under load, what survived the scavenges (promoted objects stay
// until a mark-compact), by the stack that allocated it.
import inspector from 'node:inspector';
import fs from 'node:fs';
import path from 'node:path';

const dir = process.env.BENCH_HEAP_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  let running = false;
  let n = 0;
  session.post('HeapProfiler.enable');
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('HeapProfiler.startSampling', { samplingInterval: 4096 });
      return;
    }
    running = false;
    session.post('HeapProfiler.stopSampling', (err, r) => {
      n++;
      if (!err) fs.writeFileSync(path.join(dir, `heap-${process.pid}-${n}.json`), JSON.stringify(r.profile));
    });
  });
}
