import type { App } from './app-type.ts';
import type { Appointments } from '../../actors/call/appointments.ts';
import { AppointmentSchema } from '../schemas/calls.ts';
import { ListOf, pageQueryWith, responses, Timestamp, Type } from '../schemas/common.ts';
import { caller, customerIdOf, pageOf, type CustomerLookupDeps } from './helpers.ts';

/** What the appointment routes use: the appointment reads and customer naming. */
export interface AppointmentRouteDeps extends CustomerLookupDeps {
  appointments: Appointments;
}

export function registerAppointmentRoutes(app: App, deps: AppointmentRouteDeps): void {
  app.get(
    '/v1/appointments',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'listAppointments',
        summary: 'Appointments booked on calls, newest first; from/to bound the meeting start (a billing period)',
        description: 'Meetings the agent booked, filtered by customer, status and when they start.',
        tags: ['calls'],
        querystring: pageQueryWith({
          customer_id: Type.Optional(Type.String({ maxLength: 255, description: 'only the appointments of this customer (service id or external_ref)' })),
          status: Type.Optional(Type.Union([Type.Literal('booked'), Type.Literal('cancelled')], { description: 'only appointments with this status' })),
          from: Type.Optional({ ...Timestamp, description: 'only meetings starting at or after this instant (ISO 8601)' }),
          to: Type.Optional({ ...Timestamp, description: 'only meetings starting before this instant (ISO 8601)' }),
        }),
        response: responses({ 200: ListOf(AppointmentSchema, 'AppointmentList') }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      const q = request.query;
      const customerId = q.customer_id ? await customerIdOf(deps, request, q.customer_id) : null;
      return deps.appointments.list(auth.accountId, auth.mode, {
        customerId,
        status: q.status ?? null,
        from: q.from ? new Date(q.from) : null,
        to: q.to ? new Date(q.to) : null,
        page: pageOf(q),
      });
    },
  );

  app.get(
    '/v1/appointments/:id',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'getAppointment',
        summary: 'One appointment: exact instants and the zone it was agreed in',
        description: 'A meeting booked on a call, with the call it came from.',
        tags: ['calls'],
        params: Type.Object({ id: Type.String({ maxLength: 64, description: 'the id of the appointment' }) }),
        response: responses({ 200: AppointmentSchema }, ['appointment_not_found', 'scope_missing']),
      },
    },
    async (request) => {
      const auth = caller(request);
      return deps.appointments.get(auth.accountId, auth.mode, request.params.id);
    },
  );
}
