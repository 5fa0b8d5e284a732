import type { EmailRow } from '../../db/email-outbox.ts';
import { roleMay, type ConsoleRole } from '../account/console-roles.ts';

/**
 * Who an email goes to. `person` and `customer` emails carry their address; `billing` emails go
 * to the account's console people whose role holds billing:write (owner, admin, billing), read
 * when the email is sent, so a person removed since the fact no longer receives it. Pure.
 */
export function recipientsOf(row: Pick<EmailRow, 'audience' | 'to_address'>, people: { email: string; role: ConsoleRole }[]): string[] {
  if (row.audience !== 'billing') return row.to_address ? [row.to_address] : [];
  return [...new Set(people.filter((p) => roleMay(p.role, 'billing:write')).map((p) => p.email))];
}
