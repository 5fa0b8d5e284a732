import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import type { IdempotencyClaim } from '../../db/idempotency.ts';
import { createCallRepository } from '../../db/calls.ts';
import { createAppointmentRepository } from '../../db/appointments.ts';
import { createCustomerRepository } from '../../db/customers.ts';
import { createDncRepository } from '../../db/dnc.ts';
import { recordEvent } from '../../db/events.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { pageStart, toList, type Page } from '../shared/list.ts';
import { writeTransaction, type Written } from '../shared/transaction.ts';
import { parsePhone } from '../scheduler/phone.ts';
import { appointmentView, callRequestView, callView, dncView, isFinished } from './views.ts';
import { withTransaction } from '../../db/pool.ts';

/**
 * The reseller-facing side of calls: queueing requests, reading calls and appointments,
 * cancelling, and the do-not-call list. The account actor delegates these here.
 */

/** A request not dialled within this long expires (unless the request names an earlier `dial_before`). */
export const DEFAULT_DIAL_WINDOW_DAYS = 7;
export const MAX_DIAL_WINDOW_DAYS = 30;

export interface QueueCallInput {
  customerId: string;
  phone: string;
  business_name?: string | null;
  external_ref?: string | null;
  dial_before?: string | null;
}

export function createCallRequests(deps: Deps) {
  const { pool, clock, config } = deps;

  async function queueCall(accountId: string, mode: Mode, input: QueueCallInput, idempotency: IdempotencyClaim | undefined): Promise<Written<unknown>> {
    const now = clock.now();
    const customer = await createCustomerRepository(pool).get(input.customerId);
    if (!customer || customer.account_id !== accountId || customer.mode !== mode) throw new Refusal('customer_not_found');
    const parsed = parsePhone(input.phone, customer.country);
    if (!parsed.ok) {
      throw new Refusal('invalid_phone_number', `"${input.phone}" is not a valid telephone number (read with ${customer.country} as the default country).`);
    }
    if (parsed.country !== customer.country) {
      throw new Refusal('phone_country_mismatch', `${parsed.e164} is a ${parsed.country} number; this customer calls in ${customer.country}.`);
    }
    let dialBefore = new Date(now.getTime() + DEFAULT_DIAL_WINDOW_DAYS * 86_400_000);
    if (input.dial_before) {
      const d = new Date(input.dial_before);
      if (Number.isNaN(d.getTime()) || d <= now || d.getTime() - now.getTime() > MAX_DIAL_WINDOW_DAYS * 86_400_000) {
        throw new Refusal('invalid_dial_before');
      }
      dialBefore = d;
    }
    return writeTransaction(pool, idempotency, now, async (client) => {
      const { row, created } = await createCallRepository(client).insertOrFindOpen({
        accountId,
        mode,
        customerId: customer.id,
        toE164: parsed.e164,
        toCountry: parsed.country,
        phoneInput: input.phone,
        businessName: input.business_name ?? null,
        externalRef: input.external_ref ?? null,
        dialBefore,
        now,
      });
      return { created, body: callRequestView(row) };
    });
  }

  async function getCall(accountId: string, mode: Mode, id: string) {
    const row = await createCallRepository(pool).findForAccount(accountId, mode, id);
    if (!row) throw new Refusal('call_not_found');
    return row;
  }

  return {
    queueCall,

    async getCallView(accountId: string, mode: Mode, id: string) {
      return callView(await getCall(accountId, mode, id), config.publicUrl);
    },

    async getCallRow(accountId: string, mode: Mode, id: string) {
      return getCall(accountId, mode, id);
    },

    async listCalls(accountId: string, mode: Mode, f: { customerId: string | null; view: 'calls' | 'requests'; status: string | null; page: Page }) {
      const calls = createCallRepository(pool);
      const before = await pageStart(pool, f.page, { table: 'calls', accountId, mode });
      const rows = await calls.list({ accountId, mode, customerId: f.customerId, dialledOnly: f.view === 'calls', status: f.status, limit: f.page.limit + 1, beforeSeq: before });
      return f.view === 'requests' ? toList(rows, f.page.limit, callRequestView) : toList(rows, f.page.limit, (r) => callView(r, config.publicUrl));
    },

    /** Cancels a queued request; once the dialler has claimed it the answer is 409, never a silent success. */
    async cancelCall(accountId: string, mode: Mode, id: string) {
      const now = clock.now();
      const existing = await getCall(accountId, mode, id);
      if (existing.status === 'cancelled') return callRequestView(existing);
      const cancelled = await withTransaction(pool, async (client) => {
        const row = await createCallRepository(client).cancelIfQueued(existing.id, now);
        if (row) await recordEvent(client, { accountId, mode, type: 'call.completed', data: callView(row, config.publicUrl), now });
        return row;
      });
      if (cancelled) return callRequestView(cancelled);
      const current = await getCall(accountId, mode, id);
      if (isFinished(current.status)) throw new Refusal('call_already_finished', `This request already ended (${current.status}).`);
      throw new Refusal('call_already_claimed');
    },

    async listAppointments(accountId: string, mode: Mode, f: { customerId: string | null; status: string | null; from: Date | null; to: Date | null; page: Page }) {
      const repo = createAppointmentRepository(pool);
      const before = await pageStart(pool, f.page, { table: 'appointments', accountId, mode });
      const rows = await repo.list({ accountId, mode, customerId: f.customerId, status: f.status, from: f.from, to: f.to, limit: f.page.limit + 1, beforeSeq: before });
      return toList(rows, f.page.limit, appointmentView);
    },

    async getAppointment(accountId: string, mode: Mode, id: string) {
      const row = await createAppointmentRepository(pool).findForAccount(accountId, mode, id);
      if (!row) throw new Refusal('appointment_not_found');
      return appointmentView(row);
    },

    async addDnc(accountId: string, defaultCountry: string, input: { phone: string; reason?: string | null }): Promise<Written<unknown>> {
      const parsed = parsePhone(input.phone, defaultCountry);
      if (!parsed.ok) throw new Refusal('invalid_phone_number');
      const { row, created } = await createDncRepository(pool).add({ accountId, e164: parsed.e164, source: 'api', reason: input.reason ?? null, callId: null, now: clock.now() });
      return { created, body: dncView(row) };
    },

    async listDnc(accountId: string, page: Page) {
      const repo = createDncRepository(pool);
      const before = await pageStart(pool, page, { table: 'dnc_numbers', accountId });
      return toList(await repo.list(accountId, page.limit + 1, before), page.limit, dncView);
    },

    /** Takes a number off the reseller's own list; a callee's own request cannot be undone by the reseller. */
    async removeDnc(accountId: string, defaultCountry: string, phone: string) {
      const parsed = parsePhone(phone, defaultCountry);
      if (!parsed.ok) throw new Refusal('invalid_phone_number');
      const repo = createDncRepository(pool);
      const row = await repo.get(accountId, parsed.e164);
      if (!row) throw new Refusal('dnc_entry_not_found');
      if (row.source === 'callee_request') throw new Refusal('dnc_entry_protected');
      await repo.remove(accountId, parsed.e164);
      return { object: 'dnc_entry' as const, phone: parsed.e164, deleted: true };
    },
  };
}

export type CallRequests = ReturnType<typeof createCallRequests>;

/**
 * Imports a national do-not-call registry file: one number per line (CSV: the first column),
 * national or E.164, read in `country`. Returns how many were new and which lines were not numbers.
 */
export async function importRegistry(deps: Deps, r: { country: string; source: string; text: string }) {
  const numbers: string[] = [];
  const invalid: number[] = [];
  r.text.split(/\r?\n/).forEach((line, i) => {
    const cell = line.split(',')[0].trim().replace(/^"|"$/g, '');
    if (!cell || /^[a-z_ ]+$/i.test(cell)) return; // blank lines and a header
    const parsed = parsePhone(cell, r.country);
    if (parsed.ok) numbers.push(parsed.e164);
    else invalid.push(i + 1);
  });
  const imported = await createDncRepository(deps.pool).importRegistry([...new Set(numbers)], r.country, r.source, deps.clock.now());
  return { object: 'dnc_registry_import' as const, country: r.country, source: r.source, numbers: numbers.length, imported, invalid_lines: invalid.slice(0, 100) };
}
