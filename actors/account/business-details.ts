import type { BusinessDetailsFields, BusinessDetailsRow } from '../../db/business-details.ts';
import type { AccountRow } from '../../db/accounts.ts';
import { iso } from '../../runtime/types.ts';

/**
 * The fields that say which business this is. Once the operator has verified the account, a
 * change to one of them is a different business to verify: verification goes back to pending.
 * A change to the rest (address, website, contacts, what it sells) keeps the verification, and
 * the operator sees the new details with their date.
 */
export const IDENTITY_FIELDS = ['legal_name', 'registration_number', 'country'] as const satisfies readonly (keyof BusinessDetailsFields)[];

/**
 * The business verification status after a submission of `next` (`before` is what was on file,
 * null for none). A first submission, a resubmission after a rejection, and one while pending
 * await the operator (pending); a verified account stays verified unless the business's identity
 * changed. Pure.
 */
export function kybAfterSubmission(
  status: AccountRow['kyb_status'],
  before: BusinessDetailsFields | null,
  next: BusinessDetailsFields,
): AccountRow['kyb_status'] {
  if (status !== 'verified') return 'pending';
  if (before === null) return 'verified';
  const changed = IDENTITY_FIELDS.some((f) => normalised(before[f]) !== normalised(next[f]));
  return changed ? 'pending' : 'verified';
}

/** Case and runs of spaces do not make another business. */
function normalised(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

/** The business details as the console and the operator see them, with the review's state. */
export function businessDetailsView(d: BusinessDetailsRow | null, a: Pick<AccountRow, 'kyb_status' | 'kyb_note'>) {
  return {
    object: 'business_details' as const,
    kyb_status: a.kyb_status,
    review_note: a.kyb_note,
    submitted: d !== null,
    submitted_at: iso(d?.submitted_at ?? null),
    submitted_by: d?.submitted_by_email ?? null,
    details:
      d === null
        ? null
        : {
            legal_name: d.legal_name,
            registration_number: d.registration_number,
            country: d.country,
            address: d.address,
            website: d.website,
            contact_email: d.contact_email,
            contact_phone: d.contact_phone,
            business_description: d.business_description,
          },
  };
}
