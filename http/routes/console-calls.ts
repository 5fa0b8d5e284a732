import type { FastifyRequest } from 'fastify';
import type { App } from './app-type.ts';
import type { Mode } from '../../runtime/types.ts';
import type { ConsoleCalls } from '../../actors/console/calls.ts';
import { ListOf, responses, Type } from '../schemas/common.ts';
import { CallRequestSchema, CallSchema } from '../schemas/calls.ts';
import {
  ConsoleAppointmentListQuery,
  ConsoleAppointmentSchema,
  ConsoleCallListQuery,
  ConsoleCallPageSchema,
  ConsoleModeQuery,
  ConsoleQueueCallBody,
} from '../schemas/console-calls.ts';
import { consoleCaller, consoleMode } from '../plugins/console-session.ts';
import { parseRfc3339 } from '../../actors/shared/rfc3339.ts';
import { ApiError } from '../errors.ts';
import { pageOf, sendWritten } from './helpers.ts';
import { CREATED_OR_EXISTING } from '../write-status.ts';
import { RecordingAudio, sendRecording, type CallRouteDeps } from './calls.ts';

/** What the console's call routes use: the call service of /v1 and the console's reads. */
export interface ConsoleCallRouteDeps extends CallRouteDeps {
  consoleCalls: ConsoleCalls;
}

const hide = { hide: true, tags: ['console'] };
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * A list's date bound: an RFC 3339 date-time, or a day (YYYY-MM-DD, UTC) which, as `to`, counts
 * whole (the bound is the next day's start). Anything else is 400 invalid_parameter.
 */
export function dateBound(field: 'from' | 'to', text: string | undefined): Date | null {
  if (text === undefined || text === '') return null;
  if (DAY.test(text)) {
    const at = parseRfc3339(`${text}T00:00:00Z`);
    if (at) return field === 'to' ? new Date(at.getTime() + 86_400_000) : at;
  } else {
    const at = parseRfc3339(text);
    if (at) return at;
  }
  throw new ApiError('invalid_parameter', `${field} must be an RFC 3339 date-time such as 2026-11-20T14:02:00Z or a day such as 2026-11-20; "${text}" is not.`);
}

/** The console's calls and appointments (issue 21): the /v1 shapes and the /v1 call path, behind the session cookie. */
export function registerConsoleCallRoutes(app: App, deps: ConsoleCallRouteDeps): void {
  const { callRequests, consoleCalls } = deps;
  /** What every list reads from its query: the session's account, the mode, the customer, the dates, the page. */
  const listOf = async (request: FastifyRequest, q: { mode?: Mode; customer_id?: string; from?: string; to?: string; limit?: number; starting_after?: string }) => {
    const { accountId } = consoleCaller(request);
    const mode = consoleMode(request, { write: false });
    const from = dateBound('from', q.from);
    const to = dateBound('to', q.to);
    const customerId = q.customer_id ? (await deps.customerDirectory.find(accountId, mode, q.customer_id)).id : null;
    return { accountId, mode, filter: { customerId, from, to, page: pageOf(q) } };
  };

  app.get(
    '/console/api/calls',
    {
      config: { auth: 'session', permission: 'account:read' },
      schema: {
        ...hide,
        querystring: ConsoleCallListQuery,
        response: responses({ 200: ListOf(CallSchema) }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor'], { auth: 'session' }),
      },
    },
    async (request) => {
      const { accountId, mode, filter } = await listOf(request, request.query);
      return consoleCalls.list(accountId, mode, { ...filter, status: request.query.status || null, outcome: request.query.outcome || null });
    },
  );

  app.post(
    '/console/api/calls',
    {
      config: { auth: 'session', permission: 'customers:write', writeStatus: CREATED_OR_EXISTING },
      schema: {
        ...hide,
        body: ConsoleQueueCallBody,
        response: responses({ 201: CallRequestSchema, 200: CallRequestSchema }, [
          'customer_not_found', 'invalid_phone_number', 'phone_country_mismatch', 'invalid_dial_before', 'consent_required', 'requested_call_only', 'no_redial_after_hang_up', 'registered_address_required',
          'invalid_parameter', 'unknown_parameter', 'parameter_missing', 'carrier_unavailable', 'field_too_long', 'invalid_json', 'live_not_enabled', 'reseller_suspended',
        ], { auth: 'session' }),
      },
    },
    async (request, reply) => {
      const session = consoleCaller(request);
      const { mode: _asked, ...body } = request.body;
      // As a key's: a live call needs the account live (and a suspended account writes nothing: the session plugin).
      const mode = consoleMode(request, { write: true });
      return sendWritten(reply, await callRequests.queueCall(session.accountId, mode, body, undefined));
    },
  );

  app.get(
    '/console/api/calls/:id',
    {
      config: { auth: 'session', permission: 'account:read' },
      schema: { ...hide, params: IdParams, querystring: ConsoleModeQuery, response: responses({ 200: ConsoleCallPageSchema }, ['call_not_found', 'invalid_parameter'], { auth: 'session' }) },
    },
    async (request) => {
      const { accountId } = consoleCaller(request);
      const page = await consoleCalls.page(accountId, consoleMode(request, { write: false }), request.params.id);
      return {
        object: 'console_call' as const,
        call: page.call,
        transcript: page.transcript,
        // The player's source: same origin, so the cookie goes with it; a live call's names its mode.
        recording_url: page.hasRecording ? `/console/api/calls/${page.call.id}/recording${page.call.mode === 'live' ? '?mode=live' : ''}` : null,
        compliance_trail: page.complianceTrail,
      };
    },
  );

  app.delete(
    '/console/api/calls/:id',
    {
      config: { auth: 'session', permission: 'customers:write' },
      schema: {
        ...hide,
        params: IdParams,
        querystring: ConsoleModeQuery,
        response: responses({ 200: CallRequestSchema }, ['call_not_found', 'call_already_claimed', 'call_already_finished', 'invalid_parameter'], { auth: 'session' }),
      },
    },
    async (request) => {
      const { accountId } = consoleCaller(request);
      return callRequests.cancelCall(accountId, consoleMode(request, { write: false }), request.params.id);
    },
  );

  app.get(
    '/console/api/calls/:id/recording',
    {
      config: { auth: 'session', permission: 'account:read' },
      schema: { ...hide, params: IdParams, querystring: ConsoleModeQuery, response: responses({ 200: RecordingAudio }, ['call_not_found', 'recording_not_available', 'invalid_parameter'], { auth: 'session' }) },
    },
    async (request, reply) => {
      const { accountId } = consoleCaller(request);
      return sendRecording(deps, reply, accountId, consoleMode(request, { write: false }), request.params.id);
    },
  );

  app.get(
    '/console/api/appointments',
    {
      config: { auth: 'session', permission: 'account:read' },
      schema: {
        ...hide,
        querystring: ConsoleAppointmentListQuery,
        response: responses({ 200: ListOf(ConsoleAppointmentSchema) }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor'], { auth: 'session' }),
      },
    },
    async (request) => {
      const { accountId, mode, filter } = await listOf(request, request.query);
      return consoleCalls.appointments(accountId, mode, filter);
    },
  );
}
