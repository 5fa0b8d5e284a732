import type { FastifyReply } from 'fastify';
import type { App } from './app-type.ts';
import type { CallRequests } from '../../actors/call/requests.ts';
import type { Carrier } from '../../telephony/carrier.ts';
import type { Mode } from '../../runtime/types.ts';
import { CallRequestSchema, CallSchema, ComplianceRecordSchema, QueueCallBody } from '../schemas/calls.ts';
import { ListOf, pageQueryWith, responses, StringEnum, Type } from '../schemas/common.ts';
import { ApiError } from '../errors.ts';
import { caller, customerIdOf, pageOf, sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { CREATED_OR_EXISTING } from '../write-status.ts';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'the id of the call (the same as its request)' }) });

const RECORDING_TYPE = 'audio/wav';
/** A binary body: described by its media type, never serialized. */
export const RecordingAudio = Type.Unsafe<Buffer>({
  description: 'The recording, WAV',
  // format binary: a generator reads the body as bytes (a Blob), never as JSON; 1 GiB at most.
  content: { [RECORDING_TYPE]: { schema: { type: 'string', format: 'binary', contentMediaType: RECORDING_TYPE, maxLength: 1_073_741_824 } } },
});

/** What the call routes use: the call requests service, customer naming and, for recordings, the carriers. */
export interface CallRouteDeps extends CustomerLookupDeps {
  callRequests: CallRequests;
  carriers: Record<Mode, Carrier>;
}

/**
 * Answers with the recording of the account's call `id`: fetched from the carrier, audio/wav, never
 * cached (GET /v1/calls/{id}/recording and the console's player).
 */
export async function sendRecording(deps: CallRouteDeps, reply: FastifyReply, accountId: string, mode: Mode, id: string) {
  const call = await deps.callRequests.getCall(accountId, mode, id);
  if (!call.recording_url || !call.carrier) throw new ApiError('recording_not_available');
  const audio = await deps.carriers[call.mode].fetchRecording(call.recording_url);
  // Always the WAV rendition, whatever type the carrier labels it with (audio/x-wav…): the document says audio/wav.
  return reply.code(200).header('content-type', RECORDING_TYPE).header('cache-control', 'private, no-store').send(audio.body);
}

export function registerCallRoutes(app: App, deps: CallRouteDeps): void {
  const { callRequests } = deps;

  app.post(
    '/v1/calls',
    {
      config: { scope: 'calls:write', idempotent: true, writeStatus: CREATED_OR_EXISTING },
      schema: {
        operationId: 'queueCall',
        summary: 'Queue a business to call; the service decides when to dial, inside the legal window',
        description: '201 for a new request; 200 with the open request when the same number is already queued for this customer.',
        tags: ['calls'],
        body: QueueCallBody,
        response: responses({ 201: CallRequestSchema, 200: CallRequestSchema }, [
          'customer_not_found', 'invalid_phone_number', 'phone_country_mismatch', 'invalid_dial_before', 'consent_required', 'requested_call_only', 'no_redial_after_hang_up', 'registered_address_required', 'invalid_parameter', 'unknown_parameter', 'parameter_missing',
          'carrier_unavailable',
          'field_too_long', 'invalid_json', 'idempotency_key_reused', 'idempotency_key_too_long', 'scope_missing',
        ]),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      return sendWritten(reply, await callRequests.queueCall(auth.accountId, auth.mode, request.body, request.idempotency));
    },
  );

  app.get(
    '/v1/calls',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'listCalls',
        summary: 'Calls, newest first; view=requests lists the requests (queued, cancelled and expired ones too)',
        description: "Calls in the key's mode, filtered by customer and status.",
        tags: ['calls'],
        querystring: pageQueryWith({
          customer_id: Type.Optional(Type.String({ maxLength: 255, description: 'only the calls of this customer (service id or external_ref)' })),
          view: Type.Optional(
            Type.Union([Type.Literal('calls'), Type.Literal('requests')], {
              description: "calls (the default): dialled calls, each attempt of a retried request on its own; requests: every request once, with its calls",
            }),
          ),
          status: Type.Optional(Type.String({ maxLength: 32, description: 'only calls with this status' })),
        }),
        response: responses({ 200: Type.Union([ListOf(CallSchema, 'CallList'), ListOf(CallRequestSchema, 'CallRequestList')], {
            description: 'view=requests: a CallRequestList (every item has object call_request); otherwise a CallList (every item has object call). Both are object list: tell them apart by the view sent, or by data[].object',
          }) }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      const q = request.query;
      const customerId = q.customer_id ? await customerIdOf(deps, request, q.customer_id) : null;
      return callRequests.listCalls(auth.accountId, auth.mode, { customerId, view: q.view ?? 'calls', status: q.status ?? null, page: pageOf(q) });
    },
  );

  app.get(
    '/v1/calls/:id',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'getCall',
        summary: 'A call (or request) with its outcome',
        description:
          'Where a call stands and, once `finished`, how it ended: outcome, duration, summary, appointment, recording and transcript links; ' +
          'which request it is an attempt of (`request_id`, `attempt`) and whether the request tries again after it (`will_retry`, `retry_at`).',
        tags: ['calls'],
        params: IdParams,
        response: responses({ 200: CallSchema }, ['call_not_found', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      return callRequests.getCallView(auth.accountId, auth.mode, request.params.id);
    },
  );

  app.delete(
    '/v1/calls/:id',
    {
      config: { scope: 'calls:write' },
      schema: {
        operationId: 'cancelCall',
        summary: 'Cancel a queued request (or its queued retry); 409 once the dialler has claimed it',
        description: "The id of the request or of any of its calls: the request's pending attempt is cancelled. Cancelling a request already cancelled answers it again.",
        tags: ['calls'],
        params: IdParams,
        response: responses({ 200: CallRequestSchema }, ['call_not_found', 'call_already_claimed', 'call_already_finished', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      return callRequests.cancelCall(auth.accountId, auth.mode, request.params.id);
    },
  );

  app.get(
    '/v1/calls/:id/transcript',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'getTranscript',
        summary: 'The transcript of a finished call',
        description: 'What the agent and the callee said, line by line.',
        tags: ['calls'],
        params: IdParams,
        response: responses(
          {
            200: Type.Object(
              {
                object: Type.Literal('transcript'),
                call_id: Type.String(),
                lines: Type.Array(Type.Object({ role: StringEnum(['agent', 'callee'], 'who spoke'), text: Type.String(), at: Type.String() })),
              },
              { $id: 'Transcript' },
            ),
          },
          ['call_not_found', 'transcript_not_available', 'scope_missing'],
        ),
      },
    },
    async (request) => {
      const auth = caller(request);
      const call = await callRequests.getCall(auth.accountId, auth.mode, request.params.id);
      if (call.transcript.length === 0) throw new ApiError('transcript_not_available');
      return { object: 'transcript' as const, call_id: call.id, lines: call.transcript };
    },
  );

  app.get(
    '/v1/calls/:id/recording',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'getRecording',
        summary: 'The recording (audio/wav), fetched from the carrier on request; never public',
        description: 'The audio of an answered call, streamed through this API with the key; 404 recording_not_available until it exists.',
        tags: ['calls'],
        params: IdParams,
        response: responses({ 200: RecordingAudio }, ['call_not_found', 'recording_not_available', 'scope_missing']),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      return sendRecording(deps, reply, auth.accountId, auth.mode, request.params.id);
    },
  );

  app.get(
    '/v1/calls/:id/compliance_record',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'getComplianceRecord',
        summary: 'The compliance record of a dialled call: the consent stored, when, and from which request',
        description:
          'What was recorded right before the dial (the consent as sent and as recorded, the line type, the rule and its citations) and the ' +
          "agent's identification, with the request it came from; kept at least until keep_until (UWG § 7a for German numbers). " +
          '404 compliance_record_not_found for a request never dialled.',
        tags: ['calls'],
        params: IdParams,
        response: responses({ 200: ComplianceRecordSchema }, ['call_not_found', 'compliance_record_not_found', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      return callRequests.getComplianceRecord(auth.accountId, auth.mode, request.params.id);
    },
  );
}
