/**
 * The typed client (clients/typescript, issue 26) is generated from what the server serves:
 * its committed `openapi.json`, `src/schema.ts` (openapi-typescript) and `src/operations.ts` must
 * be exactly what `npm run client:generate` writes from the running server's
 * `GET /v1/openapi.json`. And `npm run build:client` builds it into a package that works.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { NO_BACKGROUND_WORK, startTestService, type TestService } from '../helpers/service.ts';
import { makeAccount } from '../helpers/factories.ts';
import { CLIENT_DIR, DOCUMENT_SERVER, generatedFiles } from '../../clients/typescript/scripts/document.ts';

let svc: TestService;
test.before(async () => {
  // The document names its server: generated under the same public URL as the script's.
  svc = await startTestService({ ...NO_BACKGROUND_WORK, SWITCHBOARD_PUBLIC_URL: DOCUMENT_SERVER });
});
test.after.always(async () => {
  await svc?.stop();
});

test('the committed document and the generated types are what the running server serves', async (t) => {
  const served = await (await fetch(`${svc.url}/v1/openapi.json`)).json();
  for (const [file, expected] of await generatedFiles(served)) {
    const committed = await fs.readFile(file, 'utf8').catch(() => '(missing)');
    t.is(committed, expected, `${path.relative(process.cwd(), file)} differs from what the server serves: run \`npm run client:generate\` and commit the result`);
  }
});

test('npm run build:client builds the package: both entries load and call the service', async (t) => {
  await new Promise<void>((resolve, reject) =>
    execFile('npm', ['run', 'build:client'], { cwd: path.join(CLIENT_DIR, '..', '..') }, (err, stdout, stderr) => (err ? reject(new Error(`${stdout}\n${stderr}`)) : resolve())),
  );
  const dist = path.join(CLIENT_DIR, 'dist');
  for (const file of ['index.js', 'index.d.ts', 'chat.js', 'chat.d.ts', 'schema.d.ts', 'operations.js']) {
    t.true(await fs.stat(path.join(dist, file)).then(() => true, () => false), `dist/${file} is built`);
  }
  const built = await import(pathToFileURL(path.join(dist, 'index.js')).href);
  const account = await makeAccount(svc.url);
  const client = new built.Client({ apiKey: account.testKey, baseUrl: svc.url });
  const me = await client.getMe();
  t.is(me.key.mode, 'test');
  const chat = await import(pathToFileURL(path.join(dist, 'chat.js')).href);
  t.is(typeof chat.sendChatMessage, 'function');
  // The browser entry pulls in no Node module.
  t.notRegex(await fs.readFile(path.join(dist, 'chat.js'), 'utf8'), /from ['"]node:/);
  for (const file of ['chat.js', 'errors.js', 'transport.js', 'operations.js']) {
    t.notRegex(await fs.readFile(path.join(dist, file), 'utf8'), /from ['"]node:/, `${file} is browser-safe`);
  }
});
