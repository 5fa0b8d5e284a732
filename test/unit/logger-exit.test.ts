import test from 'ava';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Log lines wait up to 10 ms (or 4 KB) before they are written (runtime/logger.ts): the last lines
 * before the process ends must still come out, however it ends (pino flushes its destination
 * synchronously on 'exit'). Each case runs in a child process whose stdout is a pipe.
 */

const LOGGER = fileURLToPath(new URL('../../runtime/logger.ts', import.meta.url));

function run(ending: string): { lines: string[]; status: number | null } {
  const script = `
    import { createLogger, logDestination } from ${JSON.stringify(LOGGER)};
    const log = createLogger('info', logDestination({}));
    for (let i = 0; i < 30; i++) log.info({ i, pad: 'x'.repeat(300) }, 'line');
    log.fatal('the last line');
    ${ending}
  `;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  return { lines: child.stdout.split('\n').filter(Boolean), status: child.status };
}

for (const [name, ending] of [
  ['process.exit right after logging', 'process.exit(3);'],
  ['an uncaught exception', "throw new Error('boom');"],
  ['an unhandled rejection', "Promise.reject(new Error('boom'));"],
  ['SIGTERM handled by exiting (app/cli.ts)', "process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 1000); process.kill(process.pid, 'SIGTERM');"],
] as const) {
  test(`every line logged before ${name} is written, the last one included`, (t) => {
    const { lines, status } = run(ending);
    t.not(status, null);
    t.is(lines.length, 31);
    t.deepEqual(lines.slice(0, 30).map((l) => JSON.parse(l).i), Array.from({ length: 30 }, (_, i) => i));
    t.is(JSON.parse(lines[30]).msg, 'the last line');
  });
}
