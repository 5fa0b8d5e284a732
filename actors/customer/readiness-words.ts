import type { BlockerAction, BlockerCode, Party } from './readiness.ts';

/**
 * A readiness blocker in the console's words, for the person of the reseller's team reading a
 * customer's page. Pure. What the blocker means is the readiness rule's own message
 * (actors/customer/readiness.ts); this adds who must act, in the reader's terms, what to do, and
 * where in the console, for the moves made there.
 */

/** Who must act: the reader (the reseller), the reseller's customer, or the platform's operator (the service's own move). */
export type ConsoleActor = 'you' | 'your_customer' | 'operator';

const ACTOR: Record<Party, ConsoleActor> = { reseller: 'you', customer: 'your_customer', service: 'operator' };
const ACTOR_WORDS: Record<ConsoleActor, string> = { you: 'You', your_customer: 'Your customer', operator: 'The operator' };

/** A place in the console: the label a person finds it by and the page's path. */
export interface ConsolePlace {
  label: string;
  path: string;
}

/** Where in the console each move that is made there is made. */
const GOING_LIVE = '/console/going-live';
const PLACES: Partial<Record<BlockerCode, ConsolePlace>> = {
  reseller_not_live: { label: 'Going live', path: GOING_LIVE },
  kyb_incomplete: { label: 'Going live › Business details', path: GOING_LIVE },
  agreement_unsigned: { label: 'Going live › Agreement', path: GOING_LIVE },
  insufficient_balance: { label: 'Billing', path: '/console/billing' },
};

export interface ConsoleBlockerWords {
  who: ConsoleActor;
  /** `who` for a person: You, Your customer, The operator. */
  who_label: string;
  /** What to do next, for a person. */
  what_to_do: string;
  /** Where in the console the move is made; null when it is not made in the console. */
  where: ConsolePlace | null;
}

/** The blocker as the readiness endpoint answers it (views.ts): the action's path names the customer. */
interface BlockerAsAnswered {
  code: BlockerCode;
  waiting_on: Party;
  action: BlockerAction | null;
}

/** A blocker of customer `customerId` in the console's words. */
export function consoleWordsOf(b: BlockerAsAnswered, customerId: string, customerMode: 'test' | 'live'): ConsoleBlockerWords {
  const who = ACTOR[b.waiting_on];
  const words = (what_to_do: string, where: ConsolePlace | null = null): ConsoleBlockerWords => ({ who, who_label: ACTOR_WORDS[who], what_to_do, where });
  const action = b.action;
  if (!action) return words('Nothing for you to do: the operator is on it, and calls start once it is cleared.');
  if (action.type === 'console') {
    // A test customer's balance: its test balance never holds money, so the move is a live customer.
    if (b.code === 'insufficient_balance' && customerMode === 'test') {
      return words('Test money cannot be loaded. For live calls, switch to live mode and create the customer there; live money is added under Billing.', PLACES.insufficient_balance);
    }
    return words(action.description, PLACES[b.code] ?? null);
  }
  if (action.path.endsWith('/onboarding_link')) {
    const here = { label: 'Customer › Onboarding links', path: `/console/customers/${encodeURIComponent(customerId)}` };
    return who === 'your_customer'
      ? words('Your customer accepts the calling terms on the onboarding link you sent. If they lost it, mint a new one on this page under Onboarding links (it replaces the old one) and send it to them.', here)
      : words('Mint an onboarding link on this page under Onboarding links and send it to your customer; they accept the calling terms there.', here);
  }
  const body = action.body ? ` ${JSON.stringify(action.body)}` : '';
  return words(`${action.description} Provisioning is asked for through the API: ${action.method} ${action.path}${body}.`);
}
