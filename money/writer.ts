import type { Client } from '../db/pool.ts';
import { balanceWrites } from '../db/money/balances.ts';
import { createLines } from './writer/lines.ts';
import { createTopUps } from './writer/top-ups.ts';
import { createCallMoney } from './writer/calls.ts';
import { createCallBatchMoney } from './writer/call-batch.ts';
import { createChatMoney } from './writer/chat-messages.ts';
import { createItemMoney } from './writer/items.ts';
import { createRecurringMoney } from './writer/recurring.ts';
import { createRecurringBatchMoney } from './writer/recurring-batch.ts';
import { createMonthClose } from './writer/month-close.ts';
import type { MoneyReactions } from './writer/types.ts';
import { realClock, type Clock } from '../runtime/clock.ts';

export type { CallEnd, EndCallResult, MoneyReactions, RecurringCharge, RecurringChargeResult, StartCallResult } from './writer/types.ts';
export { HOLD_LIFETIME_MS, type CallClaim } from './writer/calls.ts';

/**
 * The money writer: the one way money moves. Every write of the money tables (money rows, holds,
 * ledger, bonus grants, activity log, monthly minimums, recurring charges) goes through one of its
 * operations, and only this module and its parts under money/writer/ import the write halves of
 * db/money/ (test/unit/money-writer.test.ts).
 *
 * This file assembles the one `MoneyWriter` from one part per cause, each posting its lines
 * through the one `postLine` (money/writer/lines.ts):
 * - calls.ts: a call's hold, its settlement, the sweeper's release, refused starts;
 * - top-ups.ts: card and automatic top-ups, their bonus credit and its expiry, refunds of a top-up
 *   to its card (bonus forfeited), console refunds, an automatic top-up's failure in the activity log;
 * - chat-messages.ts: an answered chat message's price;
 * - recurring.ts: a customer's item charged by the period (a number's rent, a website's hosting);
 *   recurring-batch.ts: a renewal batch's charges at once, set-based, where they are only lines;
 * - items.ts: one-off item charges (a website's build fee) and their refunds;
 * - month-close.ts: the monthly minimum.
 *
 * What money changes elsewhere is told through `MoneyReactions`, so money/ imports no actor.
 *
 * Each operation's `now` dates its lines (the schedule clock, which a test clock moves); bonus
 * credit, a live fact, is granted and expires on `realTime` (real time unless a test hands a clock
 * it moves: docs/decisions.md, "Real time and the test clock").
 */

export type MoneyWriter = ReturnType<typeof createMoneyWriter>;

export function createMoneyWriter(reactions: MoneyReactions, realTime: Clock = realClock) {
  // A line that leaves the balance under the automatic top-up's threshold asks the payments room
  // for a card charge (reactions.autoTopUpWanted), made outside the transaction; its credit is a top-up.
  const lines = createLines(reactions, realTime);
  const topUps = createTopUps(lines, reactions, realTime);
  const calls = createCallMoney(lines);
  const callBatch = createCallBatchMoney(lines, calls);
  const chat = createChatMoney(lines);
  const items = createItemMoney(lines);
  const recurring = createRecurringMoney(lines, reactions);
  const recurringBatch = createRecurringBatchMoney(realTime);
  const monthClose = createMonthClose(lines);

  return {
    /** Both modes' money rows of a new account, in the transaction that creates it. */
    async openAccount(client: Client, accountId: string): Promise<void> {
      await balanceWrites(client).createRows(accountId);
    },

    startCall: calls.startCall,
    startCalls: callBatch.startCalls,
    settleCall: calls.settleCall,
    lockCallForEnd: calls.lockCallForEnd,
    endCall: calls.endCall,
    chargeMessage: chat.chargeMessage,
    topUp: topUps.topUp,
    refund: topUps.refund,
    refundTopUp: topUps.refundTopUp,
    setAutoTopUp: topUps.setAutoTopUp,
    recordAutoTopUpFailure: topUps.recordAutoTopUpFailure,
    recordRefusedStart: calls.recordRefusedStart,
    releaseExpiredHolds: calls.releaseExpiredHolds,
    writeOffExpiredBonus: topUps.writeOffExpiredBonus,
    chargeItem: items.chargeItem,
    refundItem: items.refundItem,
    chargeRecurring: recurring.chargeRecurring,
    chargeRecurringBatch: recurringBatch.chargeRecurringBatch,
    chargeMonthlyMinimum: monthClose.chargeMonthlyMinimum,
  };
}
