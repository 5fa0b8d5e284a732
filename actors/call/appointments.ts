import type { Queryable } from '../../db/pool.ts';
import type { Mode } from '../../runtime/types.ts';
import { createAppointmentRepository } from '../../db/appointments.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import { appointmentView } from './views.ts';

/** Which appointments a list asks for; `from`/`to` bound the meeting's start. */
export interface AppointmentFilter {
  customerId: string | null;
  status: string | null;
  from: Date | null;
  to: Date | null;
  page: Page;
}

/**
 * The reseller's reads of the appointments its calls booked. Only the call actor writes them (its
 * agent's `book_appointment` tool); these are plain reads of PostgreSQL, in the caller's account
 * and mode.
 */
export function createAppointments(pool: Queryable) {
  return {
    async list(accountId: string, mode: Mode, f: AppointmentFilter) {
      const before = await pageStart(pool, f.page, { table: 'appointments', accountId, mode });
      const rows = await createAppointmentRepository(pool).list({ accountId, mode, customerId: f.customerId, status: f.status, from: f.from, to: f.to, limit: f.page.limit + 1, beforeSeq: before });
      return toList(rows, f.page.limit, appointmentView);
    },

    /** One appointment; `appointment_not_found` for another account's or mode's. */
    async get(accountId: string, mode: Mode, id: string) {
      const row = await createAppointmentRepository(pool).findForAccount(accountId, mode, id);
      if (!row) throw new Refusal('appointment_not_found');
      return appointmentView(row);
    },
  };
}

export type Appointments = ReturnType<typeof createAppointments>;
