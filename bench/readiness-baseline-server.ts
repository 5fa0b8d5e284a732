// The baseline of the readiness benchmark: a bare fastify route that runs the readiness endpoint's
// own statement (db/readiness.ts, through checkReadiness) on a pool built as the service builds
// its own (createPool, the same size), and answers the same JSON (readinessView). No key, no rate
// limit, no actor, no request log, no hooks: what is left of the service's answer when its
// framework costs nothing. DATABASE_URL, PORT and POOL_SIZE come from the environment.
import Fastify from 'fastify';
import { createPool } from '../db/pool.ts';
import { checkReadiness } from '../actors/customer/readiness-check.ts';
import { readinessView } from '../actors/customer/views.ts';

const pool = createPool(process.env.DATABASE_URL!, Number(process.env.POOL_SIZE ?? 20));
const app = Fastify();
app.get('/v1/customers/:id/readiness', async (request, reply) => {
  const found = await checkReadiness(pool, (request.params as { id: string }).id, new Date());
  if (!found) return reply.code(404).send({ error: 'not found' });
  return readinessView(found.facts, found.assessment);
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => app.close().then(() => pool.end()).then(() => process.exit(0)));
