import { startService } from '../runtime/server.ts';
import { loadConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import { client } from '../test/helpers/http.ts';
import { spawn } from 'node:child_process';
// server in this process; autocannon in a child so it does not share the event loop
const svc = await startService(loadConfig({ PORT: '0', HOST: '127.0.0.1', SWITCHBOARD_DATA_DIR: '/tmp/probe2', SWITCHBOARD_CONSOLE_TOKEN: 'sbc_p', LOG_LEVEL: process.env.PL ?? 'info' }), { logger: createLogger(process.env.PL ?? 'info', (await import('node:fs')).createWriteStream('/dev/null')) });
const con = client(svc.url, 'sbc_p');
const account = (await con.post('/console/v1/accounts', { name: 'Bench', country: 'US' })).body;
await con.patch(`/console/v1/accounts/${account.id}/limits`, { requests_per_minute: 100_000_000, burst: 100_000_000 });
const key = (await con.post(`/console/v1/accounts/${account.id}/keys`, { mode: 'test', label: 'bench' })).body;
const customer = (await client(svc.url, key.secret).post('/v1/customers', { name: 'Bench Customer' })).body;
for (const p of ['/healthz', '/v1/me', `/v1/customers/${customer.id}`, `/v1/customers/${customer.id}/readiness`]) {
  const out = await new Promise<string>((res) => { let o = ''; const c = spawn('npx', ['autocannon', '-d', '5', '-c', '32', '-j', '-H', `authorization=Bearer ${key.secret}`, svc.url + p]); c.stdout.on('data', (d) => (o += d)); c.on('exit', () => res(o)); });
  const j = JSON.parse(out); console.log(p, Math.round(j.requests.average), 'p99', j.latency.p99, 'non2xx', j.non2xx);
}
await svc.stop();
