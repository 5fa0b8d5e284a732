import pg from 'pg';

/**
 * The money invariants (issue 3, "an invariant checker runs after every money test"), checked
 * for every account and mode straight from the tables, in one consistent snapshot. Returns one
 * human-readable line per violation; an empty list means the books balance.
 */

/** Usage causes the ledger knows (money/rules/apply-line.ts `LineInput.cause`); other line types have one cause each. */
const USAGE_CAUSES = ['call', 'chat_message', 'number', 'caller_id', 'prospect', 'website_build', 'website_hosting'];
const CAUSE_OF_TYPE: Record<string, string> = {
  top_up: 'top_up',
  bonus: 'bonus',
  refund: 'refund',
  minimum: 'monthly_minimum',
  top_up_refund: 'top_up_refund',
};
/** A bonus write-off is its expiry, or the forfeit of what a refunded top-up earned (money/writer/top-ups.ts). */
const BONUS_EXPIRED_CAUSES = ['bonus_expiry', 'bonus_forfeited'];
/** Causes of a customer's item charged by the period (money/writer/recurring.ts): one charge per item and period. */
const RECURRING_CAUSES = ['number', 'caller_id', 'website_hosting'];
/** Every cause of a customer's item, recurring or one-off (money/writer/items.ts): each line names its item in `reference`. */
const ITEM_CAUSES = [...RECURRING_CAUSES, 'website_build'];
/** Sign of each line type's amount: money in (+1) or out (-1). */
const SIGN_OF_TYPE: Record<string, 1 | -1> = { top_up: 1, bonus: 1, refund: 1, usage: -1, minimum: -1, bonus_expired: -1, top_up_refund: -1 };

export async function checkMoneyInvariants(databaseUrl: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const violations = [
      ...(await moneyRows(db)),
      ...(await customerRows(db)),
      ...(await lines(db)),
      ...(await runningBalances(db)),
      ...(await holds(db)),
      ...(await recurringLines(db)),
      ...(await recurringClaims(db)),
      ...(await itemCharges(db)),
      ...(await refunds(db)),
      ...(await cardPayments(db)),
      ...(await cardRefunds(db)),
    ];
    await db.query('COMMIT');
    return violations;
  } finally {
    await db.end();
  }
}

/** Balance, cash/bonus split, reserved money and open calls of each account and mode. */
async function moneyRows(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(`
    SELECT m.account_id, m.mode,
           m.balance_cents::bigint AS balance, m.paid_cents::bigint AS paid, m.bonus_cents::bigint AS bonus,
           m.reserved_cents::bigint AS reserved, m.open_calls::bigint AS open_calls,
           COALESCE(l.sum_amount, 0)::bigint AS sum_amount, COALESCE(l.sum_cash, 0)::bigint AS sum_cash,
           COALESCE(l.sum_bonus, 0)::bigint AS sum_bonus, COALESCE(l.applied_lines, 0)::bigint AS applied_lines,
           COALESCE(l.unapplied_lines, 0)::bigint AS unapplied_lines,
           COALESCE(h.held, 0)::bigint AS held, COALESCE(h.holds, 0)::bigint AS holds,
           COALESCE(g.remaining, 0)::bigint AS grants_remaining
      FROM account_money m
      LEFT JOIN (SELECT account_id, mode,
                        sum(amount_cents) FILTER (WHERE applied) AS sum_amount,
                        sum(cash_cents) FILTER (WHERE applied) AS sum_cash,
                        sum(bonus_cents) FILTER (WHERE applied) AS sum_bonus,
                        count(*) FILTER (WHERE applied) AS applied_lines,
                        count(*) FILTER (WHERE NOT applied) AS unapplied_lines
                   FROM ledger_entries GROUP BY account_id, mode) l ON l.account_id = m.account_id AND l.mode = m.mode
      LEFT JOIN (SELECT account_id, mode, sum(amount_cents) AS held, count(*) AS holds
                   FROM holds WHERE status = 'open' GROUP BY account_id, mode) h ON h.account_id = m.account_id AND h.mode = m.mode
      LEFT JOIN (SELECT account_id, sum(remaining_cents) AS remaining
                   FROM bonus_grants WHERE remaining_cents > 0 GROUP BY account_id) g ON g.account_id = m.account_id
     ORDER BY m.account_id, m.mode`);
  const out: string[] = [];
  for (const r of rows) {
    const who = `account ${r.account_id} (${r.mode})`;
    const n = (k: string) => Number(r[k]);
    if (r.mode === 'live') {
      if (n('balance') !== n('sum_amount')) out.push(`${who}: balance_cents ${n('balance')} ≠ sum of applied lines ${n('sum_amount')}`);
      if (n('paid') !== n('sum_cash')) out.push(`${who}: paid_cents ${n('paid')} ≠ sum of applied cash_cents ${n('sum_cash')}`);
      if (n('bonus') !== n('sum_bonus')) out.push(`${who}: bonus_cents ${n('bonus')} ≠ sum of applied bonus_cents ${n('sum_bonus')}`);
      // Expired grants not yet written off still count until the expiry job runs.
      if (n('bonus') !== n('grants_remaining')) out.push(`${who}: bonus_cents ${n('bonus')} ≠ remaining bonus grants ${n('grants_remaining')}`);
      if (n('unapplied_lines') > 0) out.push(`${who}: ${n('unapplied_lines')} live line(s) with applied = false`);
    } else {
      if (n('balance') !== 0 || n('paid') !== 0 || n('bonus') !== 0) {
        out.push(`${who}: test money moved (balance ${n('balance')}, paid ${n('paid')}, bonus ${n('bonus')})`);
      }
      if (n('applied_lines') > 0) out.push(`${who}: ${n('applied_lines')} test line(s) with applied = true`);
    }
    if (n('reserved') !== n('held')) out.push(`${who}: reserved_cents ${n('reserved')} ≠ sum of open holds ${n('held')}`);
    if (n('open_calls') !== n('holds')) out.push(`${who}: open_calls ${n('open_calls')} ≠ open holds ${n('holds')}`);
  }
  return out;
}

/** Each customer's reserved money and open calls against its open holds. */
async function customerRows(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(`
    SELECT c.id, c.reserved_cents::bigint AS reserved, c.open_calls::bigint AS open_calls,
           COALESCE(h.held, 0)::bigint AS held, COALESCE(h.holds, 0)::bigint AS holds
      FROM customers c
      LEFT JOIN (SELECT customer_id, sum(amount_cents) AS held, count(*) AS holds
                   FROM holds WHERE status = 'open' GROUP BY customer_id) h ON h.customer_id = c.id
     WHERE c.reserved_cents <> COALESCE(h.held, 0) OR c.open_calls <> COALESCE(h.holds, 0)`);
  return rows.map(
    (r) => `customer ${r.id}: reserved_cents ${Number(r.reserved)} / open_calls ${Number(r.open_calls)} ≠ open holds ${Number(r.held)} / ${Number(r.holds)}`,
  );
}

/** What each line says about itself: cause, description, customer, sign. */
async function lines(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(`
    SELECT l.id, l.seq, l.account_id, l.mode, l.type, l.cause, l.description, l.customer_id, l.amount_cents::bigint AS amount,
           l.cash_cents::bigint AS cash, l.bonus_cents::bigint AS bonus, l.reference, h.customer_id AS hold_customer_id,
           c.account_id AS customer_account_id, c.mode AS customer_mode
      FROM ledger_entries l
      LEFT JOIN holds h ON h.account_id = l.account_id AND h.reference = l.reference AND l.cause = 'call'
      LEFT JOIN customers c ON c.id = l.customer_id
     ORDER BY l.seq`);
  const out: string[] = [];
  for (const l of rows) {
    const who = `line ${l.id} (seq ${l.seq}, ${l.type}/${l.cause}, ${l.mode})`;
    const amount = Number(l.amount);
    if (!l.cause || !String(l.cause).trim()) out.push(`${who}: no cause`);
    if (!l.description || !String(l.description).trim()) out.push(`${who}: no description`);
    if (l.type === 'usage' && !USAGE_CAUSES.includes(l.cause)) out.push(`${who}: unknown usage cause`);
    if (l.type in CAUSE_OF_TYPE && l.cause !== CAUSE_OF_TYPE[l.type]) out.push(`${who}: cause should be ${CAUSE_OF_TYPE[l.type]}`);
    if (l.type === 'bonus_expired' && !BONUS_EXPIRED_CAUSES.includes(l.cause)) out.push(`${who}: cause should be one of ${BONUS_EXPIRED_CAUSES.join(', ')}`);
    if (l.type === 'top_up_refund' && Number(l.bonus) !== 0) out.push(`${who}: a refund of a top-up paid with bonus credit`);
    if (!(l.type in SIGN_OF_TYPE)) out.push(`${who}: unknown type`);
    else if (Math.sign(amount) !== SIGN_OF_TYPE[l.type]) out.push(`${who}: amount ${amount} has the wrong sign`);
    if (amount !== Number(l.cash) + Number(l.bonus)) out.push(`${who}: amount ${amount} ≠ cash ${l.cash} + bonus ${l.bonus}`);
    if (l.mode === 'test' && Number(l.bonus) !== 0) out.push(`${who}: a test line spends bonus credit`);
    // Attribution for rebilling: a call, a monthly minimum or an item's charge is always some customer's.
    if ((l.cause === 'call' || l.type === 'minimum' || ITEM_CAUSES.includes(l.cause)) && !l.customer_id) out.push(`${who}: no customer_id`);
    if (ITEM_CAUSES.includes(l.cause) && !l.reference) out.push(`${who}: an item's charge without the item in its reference`);
    // A line is billed to a customer of its own account and mode (test and live are separate worlds).
    if (l.customer_id && (l.customer_account_id !== l.account_id || l.customer_mode !== l.mode)) {
      out.push(`${who}: billed to customer ${l.customer_id} of ${l.customer_account_id} (${l.customer_mode})`);
    }
    if (l.cause === 'call') {
      if (!l.reference) out.push(`${who}: a call line without its call reference`);
      else if (!l.hold_customer_id) out.push(`${who}: no hold for call reference ${l.reference}`);
      else if (l.customer_id && l.customer_id !== l.hold_customer_id) out.push(`${who}: billed to ${l.customer_id}, but the call was ${l.hold_customer_id}'s`);
    }
  }
  return out;
}

/** balance_after_cents of each applied line is the running sum of applied lines up to it (by seq); test lines stay at 0. */
async function runningBalances(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(`
    SELECT id, seq, account_id, mode, balance_after_cents::bigint AS after, running::bigint AS running
      FROM (SELECT l.*, CASE WHEN applied
                             THEN sum(amount_cents) FILTER (WHERE applied) OVER (PARTITION BY account_id, mode ORDER BY seq)
                             ELSE 0 END AS running
              FROM ledger_entries l) x
     WHERE balance_after_cents <> running
     ORDER BY seq`);
  return rows.map((r) => `line ${r.id} (seq ${r.seq}, account ${r.account_id} ${r.mode}): balance_after_cents ${Number(r.after)} ≠ running sum ${Number(r.running)}`);
}

/** A hold resolves once and is charged at most once, never more than it held. */
async function holds(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(`
    SELECT h.id, h.account_id, h.mode, h.reference, h.status, h.amount_cents::bigint AS amount, h.charged_cents::bigint AS charged,
           h.resolved_at, COALESCE(l.n, 0)::bigint AS call_lines, COALESCE(l.total, 0)::bigint AS call_total,
           c.account_id AS customer_account_id, c.mode AS customer_mode
      FROM holds h
      JOIN customers c ON c.id = h.customer_id
      LEFT JOIN (SELECT account_id, reference, count(*) AS n, sum(-amount_cents) AS total
                   FROM ledger_entries WHERE cause = 'call' GROUP BY account_id, reference) l
             ON l.account_id = h.account_id AND l.reference = h.reference`);
  const out: string[] = [];
  for (const h of rows) {
    const who = `hold ${h.reference} of account ${h.account_id} (${h.status})`;
    const charged = h.charged === null ? null : Number(h.charged);
    if (h.customer_account_id !== h.account_id || h.customer_mode !== h.mode) out.push(`${who}: held for a customer of ${h.customer_account_id} (${h.customer_mode})`);
    if (h.status === 'open' && (charged !== null || h.resolved_at !== null)) out.push(`${who}: open but resolved or charged`);
    if (h.status !== 'open' && h.resolved_at === null) out.push(`${who}: resolved without resolved_at`);
    if (h.status === 'settled' && charged === null) out.push(`${who}: settled without charged_cents`);
    if (charged !== null && charged > Number(h.amount)) out.push(`${who}: charged ${charged} over its hold of ${Number(h.amount)}`);
    const lines = Number(h.call_lines);
    if (lines > 1) out.push(`${who}: billed ${lines} times`);
    const expected = charged ?? 0;
    if (Number(h.call_total) !== expected) out.push(`${who}: call lines total ${Number(h.call_total)} ≠ charged_cents ${expected}`);
  }
  return out;
}

/** The reference a period's line carries (money/writer/recurring.ts): `item:item_id:period_start`. */
const PERIOD_REFERENCE = `r.item || ':' || r.item_id::text || ':' || to_char(r.period_start, 'YYYY-MM-DD')`;

/**
 * One charge per item and period: every recurring line has its period claimed in
 * `recurring_charges` by the same item, account, mode, customer and amount, and no period is
 * charged twice.
 */
async function recurringLines(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT l.id, l.seq, l.account_id, l.mode, l.cause, l.customer_id, l.reference, (-l.amount_cents)::bigint AS charged,
            r.item_id, r.amount_cents::bigint AS claimed, r.customer_id AS claim_customer_id, r.account_id AS claim_account_id, r.mode AS claim_mode,
            count(*) OVER (PARTITION BY l.account_id, l.mode, l.reference) AS lines_for_period
       FROM ledger_entries l
       LEFT JOIN recurring_charges r ON l.reference = ${PERIOD_REFERENCE}
      WHERE l.type = 'usage' AND l.cause = ANY($1)
      ORDER BY l.seq`,
    [RECURRING_CAUSES],
  );
  const out: string[] = [];
  const reported = new Set<string>();
  for (const l of rows) {
    const who = `line ${l.id} (seq ${l.seq}, usage/${l.cause}, ${l.mode})`;
    if (!l.reference) continue; // reported by lines()
    const n = Number(l.lines_for_period);
    const period = `${l.account_id}/${l.mode}/${l.reference}`;
    if (n > 1 && !reported.has(period)) {
      reported.add(period);
      out.push(`item period ${l.reference} of account ${l.account_id} (${l.mode}): charged ${n} times for one period`);
    }
    if (l.item_id === null) {
      out.push(`${who}: no claim of its period in recurring_charges (${l.reference})`);
      continue;
    }
    const differs = [
      Number(l.claimed) !== Number(l.charged) ? `amount ${Number(l.claimed)} ≠ charged ${Number(l.charged)}` : '',
      l.claim_account_id !== l.account_id || l.claim_mode !== l.mode ? `account ${l.claim_account_id} (${l.claim_mode})` : '',
      l.claim_customer_id !== l.customer_id ? `customer ${l.claim_customer_id} ≠ ${l.customer_id}` : '',
    ].filter(Boolean);
    if (differs.length > 0) out.push(`${who}: its claim in recurring_charges differs (${differs.join(', ')})`);
  }
  return out;
}

/** Every claimed period is charged by one line, is not empty, and overlaps no other period of its item. */
async function recurringClaims(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(`
    SELECT r.item, r.item_id, r.account_id, r.mode, to_char(r.period_start, 'YYYY-MM-DD') AS start, to_char(r.period_end, 'YYYY-MM-DD') AS end,
           (SELECT count(*) FROM ledger_entries l
             WHERE l.account_id = r.account_id AND l.mode = r.mode AND l.type = 'usage' AND l.cause = r.item AND l.reference = ${PERIOD_REFERENCE}) AS lines,
           (SELECT string_agg(to_char(o.period_start, 'YYYY-MM-DD') || '..' || to_char(o.period_end, 'YYYY-MM-DD'), ', ' ORDER BY o.period_start)
              FROM recurring_charges o
             WHERE o.item_id = r.item_id AND o.period_start > r.period_start AND o.period_start < r.period_end) AS overlapping
      FROM recurring_charges r
     ORDER BY r.item_id, r.period_start`);
  const out: string[] = [];
  for (const r of rows) {
    const who = `${r.item} ${r.item_id} period ${r.start}..${r.end} (account ${r.account_id}, ${r.mode})`;
    if (r.end <= r.start) out.push(`${who}: an empty period`);
    if (Number(r.lines) === 0) out.push(`${who}: claimed without a charge line`);
    if (r.overlapping) out.push(`${who}: periods overlap (${r.overlapping})`);
  }
  return out;
}

/** A one-off item (a website's build fee) is charged once. */
async function itemCharges(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT account_id, mode, cause, reference, count(*) AS n
       FROM ledger_entries
      WHERE type = 'usage' AND cause = ANY($1) AND reference IS NOT NULL
      GROUP BY account_id, mode, cause, reference
     HAVING count(*) > 1
      ORDER BY reference`,
    [ITEM_CAUSES.filter((c) => !RECURRING_CAUSES.includes(c))],
  );
  return rows.map((r) => `item ${r.reference} of account ${r.account_id} (${r.mode}): ${r.cause} charged ${Number(r.n)} times`);
}

/**
 * A refund never exceeds what was charged for its item: the refunds naming a charge's reference
 * (same account and mode) add up to at most its charges, and a refund naming an item
 * (`website_build:…`, `number:…`) has a charge of that item to give back.
 */
async function refunds(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(`
    SELECT f.account_id, f.mode, f.reference, sum(f.amount_cents)::bigint AS refunded,
           COALESCE(c.charged, 0)::bigint AS charged, COALESCE(c.n, 0)::bigint AS charges
      FROM ledger_entries f
      LEFT JOIN (SELECT account_id, mode, reference, sum(-amount_cents) AS charged, count(*) AS n
                   FROM ledger_entries WHERE type IN ('usage', 'minimum') AND reference IS NOT NULL
                  GROUP BY account_id, mode, reference) c
             ON c.account_id = f.account_id AND c.mode = f.mode AND c.reference = f.reference
     WHERE f.type = 'refund' AND f.reference IS NOT NULL
     GROUP BY f.account_id, f.mode, f.reference, c.charged, c.n
     ORDER BY f.reference`);
  const itemReference = new RegExp(`^(${ITEM_CAUSES.join('|')}):`);
  const out: string[] = [];
  for (const r of rows) {
    const who = `refunds of ${r.reference} (account ${r.account_id}, ${r.mode})`;
    const refunded = Number(r.refunded);
    if (Number(r.charges) > 0 && refunded > Number(r.charged)) out.push(`${who}: refunded ${refunded} over the ${Number(r.charged)} charged for its item`);
    if (Number(r.charges) === 0 && itemReference.test(r.reference)) out.push(`${who}: refund of an item never charged (${refunded})`);
  }
  return out;
}

/**
 * Card payments (032_payments.sql): a succeeded card payment is credited by exactly one top-up
 * line of its account and mode, carrying its payment intent and its amount; a card payment not
 * succeeded has no top-up line; a top-up line naming a payment intent of a card payment is that
 * payment's credit.
 */
async function cardPayments(db: pg.Client): Promise<string[]> {
  const { rows } = await db.query(`
    SELECT p.id, p.account_id, p.mode, p.status, p.amount_cents::bigint AS amount, p.payment_intent_id, p.ledger_line_id,
           p.refunded_cents::bigint AS refunded,
           (SELECT count(*) FROM ledger_entries l WHERE l.account_id = p.account_id AND l.type = 'top_up' AND l.payment_reference = p.payment_intent_id) AS lines,
           l.type AS line_type, l.mode AS line_mode, l.amount_cents::bigint AS line_amount, l.payment_reference AS line_reference, l.account_id AS line_account
      FROM card_payments p LEFT JOIN ledger_entries l ON l.id = p.ledger_line_id
     ORDER BY p.seq`);
  const out: string[] = [];
  for (const p of rows) {
    const who = `card payment ${p.id} (${p.status}, account ${p.account_id}, ${p.mode})`;
    const lines = Number(p.lines);
    if (p.status === 'succeeded') {
      if (lines !== 1) out.push(`${who}: credited by ${lines} top-up lines with its payment intent ${p.payment_intent_id}`);
      if (p.line_type !== 'top_up' || p.line_account !== p.account_id || p.line_mode !== p.mode) out.push(`${who}: its ledger line is not a top-up of its account and mode`);
      else if (Number(p.line_amount) !== Number(p.amount)) out.push(`${who}: amount ${Number(p.amount)} ≠ its top-up line ${Number(p.line_amount)}`);
      else if (p.line_reference !== p.payment_intent_id) out.push(`${who}: its top-up line names ${p.line_reference}, not ${p.payment_intent_id}`);
    } else {
      if (p.payment_intent_id && lines > 0) out.push(`${who}: not succeeded, yet a top-up line names its payment intent`);
      if (Number(p.refunded) > 0) out.push(`${who}: refunded ${Number(p.refunded)} of a payment that did not succeed`);
    }
  }
  return out;
}

/**
 * Refunds of card payments: a succeeded refund is one `top_up_refund` line of its amount (its
 * reference the refund's id), a payment's refunded_cents is the sum of its succeeded refunds and
 * never more than it paid, and every `top_up_refund` line is a succeeded refund's.
 */
async function cardRefunds(db: pg.Client): Promise<string[]> {
  const out: string[] = [];
  const { rows } = await db.query(`
    SELECT r.id, r.status, r.amount_cents::bigint AS amount, r.account_id, l.type AS line_type, l.amount_cents::bigint AS line_amount,
           l.account_id AS line_account, l.reference AS line_reference
      FROM card_refunds r LEFT JOIN ledger_entries l ON l.id = r.ledger_line_id ORDER BY r.seq`);
  for (const r of rows) {
    const who = `card refund ${r.id} (${r.status})`;
    if (r.status !== 'succeeded') continue;
    if (r.line_type !== 'top_up_refund' || r.line_account !== r.account_id) out.push(`${who}: its ledger line is not a top_up_refund of its account`);
    else if (Number(r.line_amount) !== -Number(r.amount)) out.push(`${who}: amount ${Number(r.amount)} ≠ −(its line ${Number(r.line_amount)})`);
    else if (r.line_reference !== r.id) out.push(`${who}: its line's reference is ${r.line_reference}`);
  }
  const sums = await db.query(`
    SELECT p.id, p.amount_cents::bigint AS amount, p.refunded_cents::bigint AS refunded, COALESCE(sum(r.amount_cents) FILTER (WHERE r.status = 'succeeded'), 0)::bigint AS succeeded
      FROM card_payments p LEFT JOIN card_refunds r ON r.card_payment_id = p.id
     GROUP BY p.id HAVING p.refunded_cents <> COALESCE(sum(r.amount_cents) FILTER (WHERE r.status = 'succeeded'), 0) OR p.refunded_cents > p.amount_cents`);
  for (const p of sums.rows) out.push(`card payment ${p.id}: refunded_cents ${Number(p.refunded)} ≠ its succeeded refunds ${Number(p.succeeded)} (paid ${Number(p.amount)})`);
  const orphans = await db.query(`
    SELECT l.id, l.reference FROM ledger_entries l
     WHERE l.type = 'top_up_refund' AND NOT EXISTS (SELECT 1 FROM card_refunds r WHERE r.ledger_line_id = l.id AND r.status = 'succeeded')`);
  for (const l of orphans.rows) out.push(`line ${l.id} (top_up_refund ${l.reference}): no succeeded card refund behind it`);
  return out;
}
