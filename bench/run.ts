/**
 * `npm run bench`: every benchmark, each as a ratio against a baseline measured in this same run
 * on this machine. BENCH_SECONDS sets the measuring time of load tests (default 10).
 */
import { coldStartBench, readinessBench } from './readiness.ts';
import { moneyBench } from './money.ts';
import { mediaRelayBench } from './media-relay.ts';
import { diallerBench } from './dialler.ts';
import { webhooksBench } from './webhooks.ts';
import { numbersBench } from './numbers.ts';
import { websitesBench } from './websites.ts';
import { consoleOverviewBench } from './console-overview.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const only = process.argv[2];

const benches: Record<string, () => Promise<{ name: string; summary: string }>> = {
  'cold-start': coldStartBench,
  readiness: () => readinessBench(seconds),
  money: () => moneyBench(seconds),
  'media-relay': () => mediaRelayBench(seconds),
  dialler: () => diallerBench(),
  webhooks: () => webhooksBench(seconds),
  numbers: () => numbersBench(),
  websites: () => websitesBench(seconds),
  'console-overview': () => consoleOverviewBench(seconds),
  'barge-in': async () => (await import('./barge-in.ts')).bargeInBench(),
};

for (const [key, run] of Object.entries(benches)) {
  if (only && key !== only) continue;
  const result = await run();
  process.stdout.write(`${result.summary}\n`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
