import type { App } from './app-type.ts';
import type { DncList } from '../../actors/dnc/dnc-list.ts';
import { DncEntrySchema } from '../schemas/calls.ts';
import { ListOf, Nullable, PageQuery, responses, Type, withCode } from '../schemas/common.ts';
import { caller, pageOf, sendWritten } from './helpers.ts';
import { CREATED_OR_EXISTING } from '../write-status.ts';

/** What the do-not-call routes use: the list itself. */
export interface DncRouteDeps {
  dnc: DncList;
}

/** The reseller's do-not-call list (numbers in E.164; national numbers read in the account's country). */
export function registerDncRoutes(app: App, { dnc }: DncRouteDeps): void {
  app.post(
    '/v1/dnc',
    {
      config: { scope: 'calls:write', idempotent: true, writeStatus: CREATED_OR_EXISTING },
      schema: {
        operationId: 'addDncEntry',
        summary: 'Add a number to the do-not-call list (200 if it is already listed)',
        description: 'The number is never dialled again for any customer of the account; a national number is read in the account country.',
        tags: ['calls'],
        body: Type.Object(
          { phone: withCode(Type.String({ minLength: 1, maxLength: 64 }), 'invalid_phone_number'), reason: Type.Optional(Nullable(Type.String({ maxLength: 500 }))) },
          { additionalProperties: false, examples: [{ phone: '+12025550143', reason: 'Asked by email not to be called' }] },
        ),
        response: responses({ 201: DncEntrySchema, 200: DncEntrySchema }, ['invalid_phone_number', 'unknown_parameter', 'invalid_json', 'scope_missing']),
      },
    },
    async (request, reply) =>
      sendWritten(reply, await dnc.add(caller(request).accountId, caller(request).mode, { phone: request.body.phone, reason: request.body.reason ?? null }, request.idempotency)),
  );

  app.get(
    '/v1/dnc',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'listDncEntries',
        summary: 'The do-not-call list, newest first (starting_after takes an E.164 number)',
        description: "The account's do-not-call numbers with where each came from: the API, a callee's own request or the console.",
        tags: ['calls'],
        querystring: PageQuery,
        response: responses({ 200: ListOf(DncEntrySchema, 'DncEntryList') }, ['invalid_cursor', 'scope_missing']),
      },
    },
    async (request) => dnc.list(caller(request).accountId, pageOf(request.query)),
  );

  app.delete(
    '/v1/dnc/:phone',
    {
      config: { scope: 'calls:write' },
      schema: {
        operationId: 'removeDncEntry',
        summary: 'Take a number you added off the list; a callee’s own request cannot be removed',
        description:
          'The path takes the number in E.164 (percent-encode the +) or national form. Only a key of the mode that added the entry removes it ' +
          '(409 dnc_entry_other_mode): a test key never relaxes live compliance.',
        tags: ['calls'],
        params: Type.Object({ phone: Type.String({ maxLength: 64, description: 'the number, E.164 or national' }) }),
        response: responses(
          { 200: Type.Object({ object: Type.Literal('dnc_entry'), phone: Type.String(), deleted: Type.Boolean() }, { $id: 'DeletedDncEntry' }) },
          ['invalid_phone_number', 'dnc_entry_not_found', 'dnc_entry_protected', 'dnc_entry_other_mode', 'scope_missing'],
        ),
      },
    },
    async (request) => dnc.remove(caller(request).accountId, caller(request).mode, request.params.phone),
  );
}
