/**
 * What the client is generated from and how, shared by `npm run client:generate` (generate.ts)
 * and the test that fails when the committed files drift from what the server serves
 * (test/integration/client-generated.test.ts):
 * - `openapi.json`: the served `GET /v1/openapi.json`, as the server wrote it, indented;
 * - `src/schema.ts`: the types openapi-typescript writes for it (never edited by hand);
 * - `src/operations.ts`: each operationId's method and path, read from the same document, which
 *   the client needs at run time (types say nothing at run time).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLIENT_DIR = fileURLToPath(new URL('../', import.meta.url));
export const DOCUMENT_FILE = path.join(CLIENT_DIR, 'openapi.json');
export const SCHEMA_FILE = path.join(CLIENT_DIR, 'src', 'schema.ts');
export const OPERATIONS_FILE = path.join(CLIENT_DIR, 'src', 'operations.ts');
/**
 * The public URL the document is generated under: the document names its server, and a
 * committed document must not name the machine it was generated on. The client is always given
 * its `baseUrl`.
 */
export const DOCUMENT_SERVER = 'https://api.example.com';

/** The document as committed: the served JSON, indented, one trailing newline. */
export function documentText(doc: unknown): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** The types openapi-typescript (the workspace's own, with TypeScript 5) generates for a document. */
export async function typesOf(text: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'client-generate-'));
  try {
    const input = path.join(dir, 'openapi.json');
    const output = path.join(dir, 'schema.ts');
    await fs.writeFile(input, text);
    const cli = path.join(CLIENT_DIR, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, [cli, input, '--output', output], { cwd: CLIENT_DIR }, (err, _out, stderr) =>
        err ? reject(new Error(`openapi-typescript failed: ${stderr || err.message}`)) : resolve(),
      ),
    );
    return await fs.readFile(output, 'utf8');
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Whether an operation takes `Idempotency-Key`: declared as a header, or answering its codes. */
function takesIdempotencyKey(op: Json): boolean {
  const declared = (op.parameters ?? []).some((p: Json) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key');
  const answers = Object.values<Json>(op.responses ?? {}).some((r) => /\bidempotency_key_reused\b/.test(String(r.description ?? '')));
  return declared || answers;
}

/** Whether an operation is a cursor-paged list: it takes `starting_after`. */
function isPaged(op: Json, doc: Json): boolean {
  const resolve = (p: Json): Json => (p.$ref ? p.$ref.split('/').slice(1).reduce((o: Json, k: string) => o?.[k], doc) : p);
  return (op.parameters ?? []).map(resolve).some((p: Json) => p.in === 'query' && p.name === 'starting_after');
}

/** Whether the operation's success answer is something other than JSON (the recording's audio). */
function answersBytes(op: Json): boolean {
  const ok = Object.entries<Json>(op.responses ?? {}).find(([status]) => /^2\d\d$/.test(status))?.[1];
  const types = Object.keys(ok?.content ?? {});
  return types.length > 0 && !types.some((t) => t === 'application/json' || t.endsWith('+json'));
}

/** The security requirements of an operation: its own, else the document's. */
const securityOf = (op: Json, doc: Json): Json[] => op.security ?? doc.security ?? [];

/** The API key's security scheme: the one most operations name. */
function keyScheme(doc: Json): string | undefined {
  const uses = new Map<string, number>();
  for (const item of Object.values<Json>(doc.paths)) {
    for (const method of METHODS) {
      if (!item[method]) continue;
      for (const name of new Set(securityOf(item[method], doc).flatMap((req) => Object.keys(req)))) uses.set(name, (uses.get(name) ?? 0) + 1);
    }
  }
  return [...uses].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/**
 * Whether an operation is called with something other than the API key (the chat routes' session
 * token): none of its security requirements names the API key's scheme.
 */
function takesSessionToken(op: Json, doc: Json): boolean {
  const key = keyScheme(doc);
  return !securityOf(op, doc).some((req) => key !== undefined && key in req);
}

/**
 * The operation's place in a resource namespace, as stripe-node names them
 * (`client.customers.list()`): `/v1/<resource>` GET is `list` (when paged, else `retrieve`) and POST
 * `create`; `/v1/<resource>/{id}` GET is `retrieve`, PATCH `update`, DELETE `del`; PATCH of
 * `/v1/<resource>` is `update`. Nested paths have none (their operationId method is the way).
 */
function resourceVerb(method: string, p: string, paged: boolean): [string, string] | null {
  const top = /^\/v1\/([a-z_]+)$/.exec(p);
  const item = /^\/v1\/([a-z_]+)\/\{[a-z_]+\}$/.exec(p);
  const verbs: Record<string, string | undefined> = top
    ? { get: paged ? 'list' : 'retrieve', post: 'create', patch: 'update' }
    : item
      ? { get: 'retrieve', patch: 'update', delete: 'del' }
      : {};
  const verb = verbs[method];
  return verb ? [(top ?? item)![1], verb] : null;
}

/** `src/operations.ts`: every operation of the document by its operationId. */
export function operationsOf(doc: Json): string {
  const rows: string[] = [];
  for (const [p, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      if (!op.operationId) throw new Error(`${method.toUpperCase()} ${p} has no operationId`);
      const place = resourceVerb(method, p, isPaged(op, doc));
      const flags = [
        `method: '${method.toUpperCase()}'`,
        `path: '${p}'`,
        `idempotent: ${takesIdempotencyKey(op)}`,
        `paged: ${isPaged(op, doc)}`,
        `bytes: ${answersBytes(op)}`,
        `session: ${takesSessionToken(op, doc)}`,
        // The key's scopes the operation needs (the document's x-required-scopes; 403 scope_missing without one).
        `scopes: [${((op['x-required-scopes'] ?? []) as string[]).map((s) => `'${s}'`).join(', ')}]`,
        ...(place ? [`resource: '${place[0]}'`, `verb: '${place[1]}'`] : []),
      ];
      rows.push(`  ${op.operationId}: { ${flags.join(', ')} },`);
    }
  }
  return [
    '/**',
    ' * Generated from openapi.json by `npm run client:generate` (clients/typescript/scripts/document.ts).',
    ' * Do not edit by hand. Each operation by its operationId: method, path, whether it takes an',
    ' * Idempotency-Key, whether it is a cursor-paged list, whether it answers bytes rather than JSON,',
    ' * whether it takes a chat session token instead of an API key, the scopes its key needs, and its resource and verb',
    " * (`client.customers.list()`) where it has them.",
    ' */',
    'export const operations = {',
    ...rows,
    '} as const;',
    '',
  ].join('\n');
}

/** The three generated files, from a served document. */
export async function generatedFiles(doc: Json): Promise<Map<string, string>> {
  const text = documentText(doc);
  return new Map([
    [DOCUMENT_FILE, text],
    [SCHEMA_FILE, await typesOf(text)],
    [OPERATIONS_FILE, operationsOf(doc)],
  ]);
}
