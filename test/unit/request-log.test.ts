import test from 'ava';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { Writable } from 'node:stream';
import { createLogger } from '../../runtime/logger.ts';
import { genRequestId, installRequestLog, lazyRequestLogger, requestLineWriter } from '../../http/plugins/request-log.ts';
import type { AnyApp } from '../../http/routes/app-type.ts';

/*
 * request.log is made on first use (http/plugins/request-log.ts): a request that logs nothing but
 * its request line makes no pino child, and a line logged through request.log still carries the
 * request's id (`reqId`) and is still redacted.
 */
async function appWithCapture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const log = createLogger('info', sink);
  let children = 0;
  const child = log.child.bind(log);
  log.child = ((...args: Parameters<typeof child>) => {
    children++;
    return child(...args);
  }) as typeof log.child;
  const app = Fastify({
    loggerInstance: log as unknown as FastifyBaseLogger,
    childLoggerFactory: lazyRequestLogger,
    genReqId: genRequestId,
    logController: new LogController({ disableRequestLogging: true }),
  });
  installRequestLog(app as unknown as AnyApp);
  app.get('/quiet', async () => ({ ok: true }));
  app.get('/loud', async (request) => {
    request.log.debug('below the level');
    request.log.warn({ secret: 'sk_live_do_not_print' }, 'something to say');
    return { ok: true };
  });
  await app.ready();
  return { app, lines, children: () => children };
}

test('a request that logs only its request line makes no pino child; one that logs through request.log gets one, its lines with reqId and redacted', async (t) => {
  const { app, lines, children } = await appWithCapture();
  const before = children();
  const quiet = await app.inject({ method: 'GET', url: '/quiet' });
  t.is(children(), before, 'no child for a request that logs nothing else');
  const loud = await app.inject({ method: 'GET', url: '/loud' });
  t.is(children(), before + 1, 'one child, made by the first line');

  const said = lines.find((l) => l.msg === 'something to say');
  t.is(said?.reqId, loud.headers['request-id']);
  t.is(said?.secret, '[redacted]');
  t.false(lines.some((l) => l.msg === 'below the level'), 'a line below the level is not written (and made no child)');

  for (const r of [quiet, loud]) {
    const line = lines.find((l) => l.msg === 'request' && l.request_id === r.headers['request-id']);
    t.like(line, { level: 30, method: 'GET', status: 200, account_id: null, mode: null });
  }
  await app.close();
});

test('a line below the level made through request.log makes no child', async (t) => {
  const { app, children } = await appWithCapture();
  app.log.level = 'info';
  const before = children();
  const logger = lazyRequestLogger.call(app as never, app.log, { reqId: 'req_x' }, {}, {} as never);
  logger.debug('nothing');
  logger.trace('nothing');
  t.is(children(), before);
  t.is(logger.level, 'info');
  logger.info('something');
  t.is(children(), before + 1);
  await app.close();
});

test('the request line is written as pino itself writes that object at info', (t) => {
  const written: string[] = [];
  const log = createLogger('info', new Writable({ write: (chunk, _enc, done) => (written.push(String(chunk)), done()) }));
  const line = { request_id: 'req_0123456789abcdef01234567', account_id: 'acct_"quoted"', mode: 'test', method: 'GET', route: '/v1/customers/:id/readiness', status: 200, duration_ms: 1.25 };
  log.info(line, 'request');
  requestLineWriter(log as unknown as FastifyBaseLogger)(line);
  const [byPino, byHand] = written.map((l) => l.replace(/"time":"[^"]*"/, '"time":"-"'));
  t.is(byHand, byPino);
  log.level = 'warn';
  requestLineWriter(log as unknown as FastifyBaseLogger)(line);
  t.is(written.length, 2, 'nothing below the level');
});

test('a /healthz answered 200 is logged at debug, as pino writes it there; any other /healthz answer at info', (t) => {
  const written: string[] = [];
  const log = createLogger('debug', new Writable({ write: (chunk, _enc, done) => (written.push(String(chunk)), done()) }));
  const write = requestLineWriter(log as unknown as FastifyBaseLogger);
  const probe = { request_id: 'req_0123456789abcdef01234567', account_id: null, mode: null, method: 'GET', route: '/healthz', status: 200, duration_ms: 0.05 };
  log.debug(probe, 'request');
  write(probe);
  const [byPino, byHand] = written.map((l) => l.replace(/"time":"[^"]*"/, '"time":"-"'));
  t.is(byHand, byPino);
  t.is(JSON.parse(byHand).level, 20);

  log.level = 'info';
  write(probe);
  t.is(written.length, 2, 'a probe answered 200 writes nothing at info');
  write({ ...probe, status: 503 });
  t.is(written.length, 3, 'a /healthz answered otherwise is written at info');
  t.like(JSON.parse(written[2]), { level: 30, route: '/healthz', status: 503 });
  write({ ...probe, route: '/readyz' });
  t.like(JSON.parse(written[3]), { level: 30, route: '/readyz', status: 200 });
});
