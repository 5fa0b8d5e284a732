import type { Queryable } from './pool.ts';

/** The reseller's company details (`account_business_details`), submitted in the console. */
export interface BusinessDetailsRow {
  account_id: string;
  legal_name: string;
  registration_number: string;
  country: string;
  address: string;
  website: string | null;
  contact_email: string;
  contact_phone: string | null;
  business_description: string;
  submitted_at: Date;
  submitted_by_user_id: string | null;
  submitted_by_email: string | null;
}

/** The fields a reseller submits (everything but who and when). */
export type BusinessDetailsFields = Pick<
  BusinessDetailsRow,
  'legal_name' | 'registration_number' | 'country' | 'address' | 'website' | 'contact_email' | 'contact_phone' | 'business_description'
>;

export function createBusinessDetailsRepository(db: Queryable) {
  return {
    async get(accountId: string): Promise<BusinessDetailsRow | null> {
      const { rows } = await db.query(`SELECT * FROM account_business_details WHERE account_id = $1`, [accountId]);
      return rows[0] ?? null;
    },

    /** Stores a submission in place of the previous one. */
    async put(accountId: string, f: BusinessDetailsFields, by: { userId: string | null; email: string | null }, now: Date): Promise<BusinessDetailsRow> {
      const { rows } = await db.query(
        `INSERT INTO account_business_details
           (account_id, legal_name, registration_number, country, address, website, contact_email, contact_phone, business_description,
            submitted_at, submitted_by_user_id, submitted_by_email)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (account_id) DO UPDATE SET
           legal_name = EXCLUDED.legal_name, registration_number = EXCLUDED.registration_number, country = EXCLUDED.country,
           address = EXCLUDED.address, website = EXCLUDED.website, contact_email = EXCLUDED.contact_email,
           contact_phone = EXCLUDED.contact_phone, business_description = EXCLUDED.business_description,
           submitted_at = EXCLUDED.submitted_at, submitted_by_user_id = EXCLUDED.submitted_by_user_id,
           submitted_by_email = EXCLUDED.submitted_by_email
         RETURNING *`,
        [accountId, f.legal_name, f.registration_number, f.country, f.address, f.website, f.contact_email, f.contact_phone, f.business_description, now, by.userId, by.email],
      );
      return rows[0];
    },
  };
}
