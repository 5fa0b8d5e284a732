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
  bonus_expired: 'bonus_expiry',
};
/** Sign of each line type's amount: money in (+1) or out (-1). */
const SIGN_OF_TYPE: Record<string, 1 | -1> = { top_up: 1, bonus: 1, refund: 1, usage: -1, minimum: -1, bonus_expired: -1 };

export async function checkMoneyInvariants(databaseUrl: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const violations = [...(await moneyRows(db)), ...(await customerRows(db)), ...(await lines(db)), ...(await runningBalances(db)), ...(await holds(db))];
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
    if (!(l.type in SIGN_OF_TYPE)) out.push(`${who}: unknown type`);
    else if (Math.sign(amount) !== SIGN_OF_TYPE[l.type]) out.push(`${who}: amount ${amount} has the wrong sign`);
    if (amount !== Number(l.cash) + Number(l.bonus)) out.push(`${who}: amount ${amount} ≠ cash ${l.cash} + bonus ${l.bonus}`);
    if (l.mode === 'test' && Number(l.bonus) !== 0) out.push(`${who}: a test line spends bonus credit`);
    // Attribution for rebilling: a call or a monthly minimum is always some customer's.
    if ((l.cause === 'call' || l.type === 'minimum') && !l.customer_id) out.push(`${who}: no customer_id`);
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
