// The baseline of the websites benchmark: @fastify/static serving FILE (the same bytes the service serves) on PORT, at /site.html.
import path from 'node:path';
import Fastify from 'fastify';
import fastifyStatic from '@fastify/static';

const app = Fastify();
await app.register(fastifyStatic, { root: path.dirname(process.env.FILE), prefix: '/' });
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
