import crypto from 'node:crypto';
import test from 'ava';
import pg from 'pg';
import { freshDatabase } from '../helpers/db.ts';
import { checkMoneyInvariants } from '../helpers/invariants.ts';
import { createPool, withTransaction, type Pool } from '../../db/pool.ts';
import { createMoneyWriter } from '../../money/writer.ts';

/*
 * The invariant checker (test/helpers/invariants.ts) is what every money test trusts, so it is
 * tested itself: books written by the money writer pass, and books broken by hand (rows inserted
 * straight into a fresh database, each fault alone and the rest kept consistent) are named, each
 * by its own complaint. Removing a check makes its case fail here.
 */

/** Good books: a live top-up, a number's rent for one period, a website's build fee, and a test-mode rent. */
interface Books {
  url: string;
  db: pg.Client;
  accountId: string;
  customerId: string;
  testCustomerId: string;
  numberId: string;
  /** The number's paid period, [start, end). */
  periodStart: string;
  periodEnd: string;
  buildRef: string;
}

const BUILD_FEE_CENTS = 35_000;
const RENT_CENTS = 1_500;

async function goodBooks(): Promise<Books> {
  const url = await freshDatabase();
  const pool: Pool = createPool(url, 2);
  const money = createMoneyWriter({ spendableCrossedCallReserve: async () => {} });
  const now = new Date('2026-11-27T10:00:00Z');
  const numberId = crypto.randomUUID();
  const buildRef = `website_build:${crypto.randomUUID()}`;
  let accountId: string, customerId: string, testCustomerId: string;
  try {
    const { rows: accounts } = await pool.query(`INSERT INTO accounts (slug, name, country, created_at) VALUES ($1, 'Agency', 'US', $2) RETURNING id`, [
      `a-${crypto.randomUUID()}`,
      now,
    ]);
    accountId = accounts[0].id;
    const customer = async (mode: 'live' | 'test') =>
      (
        await pool.query(`INSERT INTO customers (account_id, mode, name, country, timezone, created_at) VALUES ($1, $2, 'Dental Co', 'US', 'America/New_York', $3) RETURNING id`, [
          accountId,
          mode,
          now,
        ])
      ).rows[0].id as string;
    customerId = await customer('live');
    testCustomerId = await customer('test');
    await withTransaction(pool, async (client) => {
      await money.openAccount(client, accountId);
      await money.topUp(client, { accountId, amountCents: 60_000, paymentReference: 'pay_1', description: 'Top-up (card)', now });
      const rent = { accountId, customerId, item: 'number' as const, amountCents: RENT_CENTS, description: 'Phone number', now };
      await money.chargeRecurring(client, { ...rent, mode: 'live', itemId: numberId, periodStart: '2026-11-27', periodEnd: '2026-12-27' });
      await money.chargeRecurring(client, { ...rent, mode: 'test', customerId: testCustomerId, itemId: crypto.randomUUID(), periodStart: '2026-11-27', periodEnd: '2026-12-27' });
      const fee = await money.chargeItem(client, { accountId, mode: 'live', customerId, cause: 'website_build', amountCents: BUILD_FEE_CENTS, reference: buildRef, description: 'Website build', now });
      if (fee.outcome !== 'charged') throw new Error('the build fee was not charged');
    });
  } finally {
    await pool.end();
  }
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  return { url, db, accountId, customerId, testCustomerId, numberId, periodStart: '2026-11-27', periodEnd: '2026-12-27', buildRef };
}

/**
 * Inserts a ledger line as the writer would have written it (its running balance right, the money
 * row moved with it), so that only the fault the case makes is wrong. `balanceAfterOff` breaks
 * the running balance on purpose.
 */
async function insertLine(
  b: Books,
  l: { mode?: 'live' | 'test'; customerId?: string | null; type: string; cause: string; amountCents: number; reference: string | null; balanceAfterOff?: number },
): Promise<void> {
  const mode = l.mode ?? 'live';
  const live = mode === 'live';
  let after = 0;
  if (live) {
    const { rows } = await b.db.query(
      `UPDATE account_money SET balance_cents = balance_cents + $3, paid_cents = paid_cents + $3 WHERE account_id = $1 AND mode = $2 RETURNING balance_cents`,
      [b.accountId, mode, l.amountCents],
    );
    after = Number(rows[0].balance_cents);
  }
  await b.db.query(
    `INSERT INTO ledger_entries (account_id, mode, customer_id, type, cause, amount_cents, cash_cents, bonus_cents, balance_after_cents, applied, reference, description, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6, 0, $7, $8, $9, 'inserted by hand', now())`,
    [b.accountId, mode, l.customerId === undefined ? (live ? b.customerId : b.testCustomerId) : l.customerId, l.type, l.cause, l.amountCents, after + (l.balanceAfterOff ?? 0), live, l.reference],
  );
}

async function insertClaim(b: Books, c: { itemId: string; item?: string; periodStart: string; periodEnd: string; amountCents: number }): Promise<void> {
  await b.db.query(
    `INSERT INTO recurring_charges (item_id, period_start, item, account_id, mode, customer_id, period_end, amount_cents, created_at)
     VALUES ($1, $2, $3, $4, 'live', $5, $6, $7, now())`,
    [c.itemId, c.periodStart, c.item ?? 'number', b.accountId, b.customerId, c.periodEnd, c.amountCents],
  );
}

/** Breaks good books with `breakBooks`, then expects exactly the complaints named (each at least once, nothing else). */
function brokenBooks(title: string, complaints: RegExp[], breakBooks: (b: Books) => Promise<void>) {
  test(`the checker names ${title}`, async (t) => {
    const b = await goodBooks();
    try {
      t.deepEqual(await checkMoneyInvariants(b.url), [], 'the writer’s books pass');
      await breakBooks(b);
      const found = await checkMoneyInvariants(b.url);
      for (const complaint of complaints) t.true(found.some((v) => complaint.test(v)), `${complaint} among ${JSON.stringify(found, null, 1)}`);
      t.deepEqual(
        found.filter((v) => !complaints.some((c) => c.test(v))),
        [],
        'no complaint but the fault’s own',
      );
    } finally {
      await b.db.end();
    }
  });
}

brokenBooks('a double charge of one period', [/^item period number:\S+:2026-11-27 of account \S+ \(live\): charged 2 times for one period$/], async (b) => {
  await insertLine(b, { type: 'usage', cause: 'number', amountCents: -RENT_CENTS, reference: `number:${b.numberId}:${b.periodStart}` });
});

brokenBooks('a period charged without its claim', [/: no claim of its period in recurring_charges \(number:\S+:2026-12-27\)$/], async (b) => {
  await insertLine(b, { type: 'usage', cause: 'number', amountCents: -RENT_CENTS, reference: `number:${b.numberId}:${b.periodEnd}` });
});

brokenBooks('a claim that does not match its line', [/: its claim in recurring_charges differs \(amount 1500 ≠ charged 1600\)$/], async (b) => {
  const itemId = crypto.randomUUID();
  await insertClaim(b, { itemId, periodStart: '2026-11-27', periodEnd: '2026-12-27', amountCents: RENT_CENTS });
  await insertLine(b, { type: 'usage', cause: 'number', amountCents: -1_600, reference: `number:${itemId}:2026-11-27` });
});

brokenBooks('a period claimed but never charged', [/^number \S+ period 2026-12-27\.\.2027-01-27 \(account \S+, live\): claimed without a charge line$/], async (b) => {
  await insertClaim(b, { itemId: b.numberId, periodStart: b.periodEnd, periodEnd: '2027-01-27', amountCents: RENT_CENTS });
});

brokenBooks('two periods of one item that overlap', [/^number \S+ period 2026-11-27\.\.2026-12-27 \(account \S+, live\): periods overlap \(2026-12-10\.\.2027-01-10\)$/], async (b) => {
  await insertClaim(b, { itemId: b.numberId, periodStart: '2026-12-10', periodEnd: '2027-01-10', amountCents: RENT_CENTS });
  await insertLine(b, { type: 'usage', cause: 'number', amountCents: -RENT_CENTS, reference: `number:${b.numberId}:2026-12-10` });
});

brokenBooks('an empty period', [/^number \S+ period 2026-12-27\.\.2026-12-27 \(account \S+, live\): an empty period$/], async (b) => {
  await insertClaim(b, { itemId: b.numberId, periodStart: b.periodEnd, periodEnd: b.periodEnd, amountCents: RENT_CENTS });
  await insertLine(b, { type: 'usage', cause: 'number', amountCents: -RENT_CENTS, reference: `number:${b.numberId}:${b.periodEnd}` });
});

brokenBooks('a build fee charged twice', [/^item website_build:\S+ of account \S+ \(live\): website_build charged 2 times$/], async (b) => {
  await insertLine(b, { type: 'usage', cause: 'website_build', amountCents: -BUILD_FEE_CENTS, reference: b.buildRef });
});

brokenBooks('a refund over its charge', [/^refunds of website_build:\S+ \(account \S+, live\): refunded 35001 over the 35000 charged for its item$/], async (b) => {
  await insertLine(b, { type: 'refund', cause: 'refund', amountCents: 35_001, reference: b.buildRef });
});

brokenBooks('two refunds of one item adding up to more than its charge', [/: refunded 40000 over the 35000 charged for its item$/], async (b) => {
  await insertLine(b, { type: 'refund', cause: 'refund', amountCents: 20_000, reference: b.buildRef });
  await insertLine(b, { type: 'refund', cause: 'refund', amountCents: 20_000, reference: b.buildRef });
});

brokenBooks('a refund of an item never charged', [/^refunds of website_build:\S+ \(account \S+, live\): refund of an item never charged \(35000\)$/], async (b) => {
  await insertLine(b, { type: 'refund', cause: 'refund', amountCents: BUILD_FEE_CENTS, reference: `website_build:${crypto.randomUUID()}` });
});

brokenBooks('a test-mode refund of a live charge', [/^refunds of website_build:\S+ \(account \S+, test\): refund of an item never charged \(35000\)$/], async (b) => {
  await insertLine(b, { mode: 'test', type: 'refund', cause: 'refund', amountCents: BUILD_FEE_CENTS, reference: b.buildRef });
});

brokenBooks('an item charge billed to no customer', [/\(seq \d+, usage\/website_build, live\): no customer_id$/], async (b) => {
  await insertLine(b, { customerId: null, type: 'usage', cause: 'website_build', amountCents: -BUILD_FEE_CENTS, reference: `website_build:${crypto.randomUUID()}` });
});

brokenBooks('an item charge that does not name its item', [/\(seq \d+, usage\/website_hosting, live\): an item's charge without the item in its reference$/], async (b) => {
  await insertLine(b, { type: 'usage', cause: 'website_hosting', amountCents: -2_000, reference: null });
});

brokenBooks(
  'a balance not matching its lines',
  [/^account \S+ \(live\): balance_cents \d+ ≠ sum of applied lines \d+$/, /^account \S+ \(live\): paid_cents \d+ ≠ sum of applied cash_cents \d+$/],
  async (b) => {
    await b.db.query(`UPDATE account_money SET balance_cents = balance_cents + 1, paid_cents = paid_cents + 1 WHERE account_id = $1 AND mode = 'live'`, [b.accountId]);
  },
);

brokenBooks('a line whose balance after is not the running sum', [/\(seq \d+, account \S+ live\): balance_after_cents \d+ ≠ running sum \d+$/], async (b) => {
  await insertLine(b, { type: 'refund', cause: 'refund', amountCents: 1_000, reference: null, balanceAfterOff: -1_001 });
});

/** A card payment as the payments room records a credited one: succeeded, its top-up line the `pay_1` one of the good books (60,000). */
async function insertCardPayment(b: Books, p: { paymentIntent?: string; refundedCents?: number } = {}): Promise<{ id: string; lineId: string }> {
  const line = (await b.db.query(`SELECT id FROM ledger_entries WHERE account_id = $1 AND type = 'top_up' AND payment_reference = 'pay_1'`, [b.accountId])).rows[0].id as string;
  const { rows } = await b.db.query(
    `INSERT INTO card_payments (account_id, mode, processor, kind, status, amount_cents, payment_intent_id, ledger_line_id, refunded_cents, created_at, paid_at)
     VALUES ($1, 'live', 'stripe', 'checkout', 'succeeded', 60000, $2, $3, $4, now(), now()) RETURNING id`,
    [b.accountId, p.paymentIntent ?? 'pay_1', line, p.refundedCents ?? 0],
  );
  return { id: rows[0].id, lineId: line };
}

brokenBooks('a card payment whose top-up line names another payment', [/^card payment \S+ \(succeeded, account \S+, live\): credited by 0 top-up lines with its payment intent pi_other$/, /: its top-up line names pay_1, not pi_other$/], async (b) => {
  await insertCardPayment(b, { paymentIntent: 'pi_other' });
});

brokenBooks('a card refund whose line is not its refund line, and a payment refunded more than its refunds', [/^card refund \S+ \(succeeded\): its ledger line is not a top_up_refund of its account$/, /^card payment \S+: refunded_cents 2000 ≠ its succeeded refunds 1000 \(paid 60000\)$/], async (b) => {
  const p = await insertCardPayment(b, { refundedCents: 2_000 });
  await b.db.query(`INSERT INTO card_refunds (card_payment_id, account_id, amount_cents, status, ledger_line_id, source, created_at) VALUES ($1, $2, 1000, 'succeeded', $3, 'operator', now())`, [p.id, b.accountId, p.lineId]);
});

brokenBooks('a top_up_refund line with no card refund behind it', [/^line \S+ \(top_up_refund stray\): no succeeded card refund behind it$/], async (b) => {
  await insertCardPayment(b);
  await insertLine(b, { customerId: null, type: 'top_up_refund', cause: 'top_up_refund', amountCents: -1_000, reference: 'stray' });
});
