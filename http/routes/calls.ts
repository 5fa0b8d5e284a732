import type { App } from './app-type.ts';
import type { Services } from '../../runtime/services.ts';
import { CallRequestSchema, CallSchema, QueueCallBody } from '../schemas/calls.ts';
import { ListOf, pageQueryWith, responses, Type } from '../schemas/common.ts';
import { ApiError } from '../errors.ts';
import { caller, customerIdOf, pageOf, sendOutcome } from './helpers.ts';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export function registerCallRoutes(app: App, services: Services): void {
  const ask = services.accounts.ask.bind(services.accounts);

  app.post(
    '/v1/calls',
    {
      config: { scope: 'calls:write', idempotent: true },
      schema: {
        summary: 'Queue a business to call; the service decides when to dial, inside the legal window',
        tags: ['calls'],
        body: QueueCallBody,
        response: responses({ 201: CallRequestSchema, 200: CallRequestSchema }, [
          'customer_not_found', 'invalid_phone_number', 'phone_country_mismatch', 'invalid_dial_before', 'unknown_parameter', 'parameter_missing',
          'field_too_long', 'invalid_json', 'idempotency_key_reused', 'idempotency_key_too_long', 'scope_missing',
        ]),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      const customerId = await customerIdOf(services, request, request.body.customer_id);
      const outcome = await ask(auth.accountId, { type: 'queue_call', mode: auth.mode, input: { ...request.body, customerId }, idempotency: request.idempotency });
      return sendOutcome(reply, outcome);
    },
  );

  app.get(
    '/v1/calls',
    {
      config: { scope: 'calls:read' },
      schema: {
        summary: 'Calls, newest first; view=requests lists the requests (queued, cancelled and expired ones too)',
        tags: ['calls'],
        querystring: pageQueryWith({
          customer_id: Type.Optional(Type.String({ maxLength: 255 })),
          view: Type.Optional(Type.Union([Type.Literal('calls'), Type.Literal('requests')])),
          status: Type.Optional(Type.String({ maxLength: 32 })),
        }),
        response: responses({ 200: Type.Union([ListOf(CallSchema), ListOf(CallRequestSchema)]) }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      const q = request.query;
      const customerId = q.customer_id ? await customerIdOf(services, request, q.customer_id) : null;
      return ask(auth.accountId, { type: 'list_calls', mode: auth.mode, customerId, view: q.view ?? 'calls', status: q.status ?? null, page: pageOf(q) });
    },
  );

  app.get(
    '/v1/calls/:id',
    {
      config: { scope: 'calls:read' },
      schema: { summary: 'A call (or request) with its outcome', tags: ['calls'], params: IdParams, response: responses({ 200: CallSchema }, ['call_not_found', 'scope_missing']) },
    },
    async (request) => {
      const auth = caller(request);
      return ask(auth.accountId, { type: 'get_call', mode: auth.mode, id: request.params.id });
    },
  );

  app.delete(
    '/v1/calls/:id',
    {
      config: { scope: 'calls:write' },
      schema: {
        summary: 'Cancel a queued request; 409 once the dialler has claimed it',
        tags: ['calls'],
        params: IdParams,
        response: responses({ 200: CallRequestSchema }, ['call_not_found', 'call_already_claimed', 'call_already_finished', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      return ask(auth.accountId, { type: 'cancel_call', mode: auth.mode, id: request.params.id });
    },
  );

  app.get(
    '/v1/calls/:id/transcript',
    {
      config: { scope: 'calls:read' },
      schema: {
        summary: 'The transcript of a finished call',
        tags: ['calls'],
        params: IdParams,
        response: responses(
          {
            200: Type.Object({
              object: Type.Literal('transcript'),
              call_id: Type.String(),
              lines: Type.Array(Type.Object({ role: Type.String({ description: 'agent, callee' }), text: Type.String(), at: Type.String() })),
            }),
          },
          ['call_not_found', 'transcript_not_available', 'scope_missing'],
        ),
      },
    },
    async (request) => {
      const auth = caller(request);
      const call = await services.callRequests.getCallRow(auth.accountId, auth.mode, request.params.id);
      if (call.transcript.length === 0) throw new ApiError('transcript_not_available');
      return { object: 'transcript' as const, call_id: call.id, lines: call.transcript };
    },
  );

  app.get(
    '/v1/calls/:id/recording',
    {
      config: { scope: 'calls:read' },
      schema: { summary: 'The recording (audio/wav), fetched from the carrier on request; never public', tags: ['calls'], params: IdParams },
    },
    async (request, reply) => {
      const auth = caller(request);
      const call = await services.callRequests.getCallRow(auth.accountId, auth.mode, request.params.id);
      if (!call.recording_url || !call.carrier) throw new ApiError('recording_not_available');
      const audio = await services.carriers[call.mode].fetchRecording(call.recording_url);
      return reply.code(200).header('content-type', audio.contentType).header('cache-control', 'private, no-store').send(audio.body);
    },
  );
}
