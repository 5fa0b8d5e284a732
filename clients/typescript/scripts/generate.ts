/**
 * `npm run client:generate`: starts the service (on an embedded database of its own, in a
 * temporary folder), reads the `GET /v1/openapi.json` it serves, and writes the client's
 * committed document and generated files from it (scripts/document.ts). Run it after any change
 * to the API's routes or schemas; a test fails until then.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../runtime/config.ts';
import { createLogger } from '../../../runtime/logger.ts';
import { startService } from '../../../app/start.ts';
import { DOCUMENT_SERVER, generatedFiles } from './document.ts';

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'client-generate-'));
try {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SWITCHBOARD_DATA_DIR: dir,
    SWITCHBOARD_PUBLIC_URL: DOCUMENT_SERVER,
    SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
    SWITCHBOARD_ADMIN_TOKEN: 'sbc_client_generate_token_not_used_for_anything',
  });
  const service = await startService(config, { logger: createLogger('warn'), fastEmbeddedDb: true, announce: () => {} });
  try {
    const res = await fetch(`${service.url}/v1/openapi.json`);
    if (!res.ok) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
    for (const [file, text] of await generatedFiles(await res.json())) {
      await fs.writeFile(file, text);
      process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
    }
  } finally {
    await service.stop();
  }
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}
