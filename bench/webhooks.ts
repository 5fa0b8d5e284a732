import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cleanUpEverything, makeTempRoot, startSwitchboard } from '../test/e2e/process-helpers.ts';
import { client } from '../test/helpers/http.ts';

/**
 * Signed webhook deliveries per second to a local receiver that answers at once, and the delay
 * from fact (the event's created_at) to delivery, at a fixed rate of events. Target: p99 < 1 s at
 * 500 events per second.
 */
export async function webhooksBench(seconds: number, rate = 500) {
  const delays: number[] = [];
  let received = 0;
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      received++;
      try {
        delays.push(Date.now() - new Date(JSON.parse(body).created_at).getTime());
      } catch {
        /* not an envelope */
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const port = (receiver.address() as AddressInfo).port;
  const token = 'sbc_bench_webhooks_token_cL68WPdGAsAn';
  const sb = await startSwitchboard({
    dataDir: await makeTempRoot('switchboard-bench-'),
    env: { SWITCHBOARD_ADMIN_TOKEN: token, SWITCHBOARD_ALLOW_PRIVATE_WEBHOOKS: '1', SWITCHBOARD_SENDER_POLL_MS: '100' },
  });
  try {
    const con = client(sb.url, token);
    const account = (await con.post('/admin/v1/accounts', { name: 'Webhook Bench', country: 'US' })).body;
    await con.post(`/admin/v1/accounts/${account.id}/webhook_endpoints`, { url: `http://127.0.0.1:${port}/hook`, mode: 'test' });
    // Events at a steady rate: one every 1/rate s, spread over the second.
    const total = rate * seconds;
    const started = Date.now();
    let sent = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * rate));
        while (sent < due) {
          sent++;
          void con.post(`/admin/v1/accounts/${account.id}/test_events`, { mode: 'test' });
        }
        if (sent >= total) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    const deadline = Date.now() + 30_000;
    while (received < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const elapsed = (Date.now() - started) / 1000;
    delays.sort((a, b) => a - b);
    const q = (p: number) => delays[Math.min(delays.length - 1, Math.floor(delays.length * p))] ?? NaN;
    return {
      name: 'webhook deliveries',
      rate,
      total,
      received,
      perSecond: Math.round(received / elapsed),
      p50Ms: q(0.5),
      p99Ms: q(0.99),
      summary: `webhooks: ${received}/${total} signed deliveries at ${rate} events/s offered (${Math.round(received / elapsed)}/s delivered); fact→delivery p50 ${q(0.5)} ms, p99 ${q(0.99)} ms (target p99 < 1000 ms)`,
    };
  } finally {
    await sb.stop('SIGTERM').catch(() => {});
    await cleanUpEverything();
    receiver.closeAllConnections();
    receiver.close();
  }
}
