// Loaded with `--import` into a process under a benchmark (BENCH_CPU_PROF_DIR=<dir>): node 20
// refuses --cpu-prof in NODE_OPTIONS, so this runs the same V8 sampling profiler through the
// inspector. Each SIGUSR2 toggles it: the first starts a profile, the next writes what it sampled
// to <dir>/<pid>-<n>.cpuprofile (the format --cpu-prof writes, read by Chrome DevTools and
// bench/profile-top.mjs) and prints `profile <n> written`, so a benchmark profiles one measured
// run at a time rather than the start-up and the other runs.
import inspector from 'node:inspector';
import fs from 'node:fs';
import path from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  let running = false;
  let n = 0;
  session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 200 }));
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.start');
      return;
    }
    running = false;
    session.post('Profiler.stop', (err, result) => {
      n++;
      if (!err) fs.writeFileSync(path.join(dir, `${process.pid}-${n}.cpuprofile`), JSON.stringify(result.profile));
      process.stderr.write(`profile ${n} written\n`);
    });
  });
}
