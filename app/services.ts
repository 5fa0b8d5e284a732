import type { EntityRegistry } from '../runtime/actor-system.ts';
import type { Deps } from '../runtime/deps.ts';
import type { TestClock } from '../runtime/clock.ts';
import type { AccountMessage, AccountReplies } from '../actors/account/messages.ts';
import type { AccountState } from '../actors/account/account-actor.ts';
import type { CustomerMessage, CustomerReplies } from '../actors/customer/messages.ts';
import type { CustomerState } from '../actors/customer/customer-actor.ts';
import type { KeyAuthenticator } from '../http/plugins/authenticate.ts';
import type { CallMessage, CallReplies } from '../actors/call/messages.ts';
import type { CallState } from '../actors/call/call-actor.ts';
import type { CallRequests } from '../actors/call/requests.ts';
import type { Carrier } from '../telephony/carrier.ts';
import type { Mode } from '../runtime/types.ts';
import type { WebhooksMessage, WebhooksReplies } from '../actors/webhooks/messages.ts';
import type { WebhooksState } from '../actors/webhooks/webhooks-actor.ts';
import type { ChatSessionRegistry } from '../actors/chat/sessions.ts';
import type { CarrierInbox } from '../actors/call/carrier-inbox.ts';

/** Everything the HTTP layer can reach: the actors and the process-wide helpers. */
export interface Services extends Deps {
  accounts: EntityRegistry<AccountMessage, AccountReplies, AccountState>;
  customers: EntityRegistry<CustomerMessage, CustomerReplies, CustomerState>;
  keys: KeyAuthenticator;
  /** SHA-256 of the operator token of /console/v1. */
  consoleTokenHash: () => Buffer | null;
  /** Set only when SWITCHBOARD_TEST_CLOCK=1. */
  testClock: TestClock | null;
  calls: EntityRegistry<CallMessage, CallReplies, CallState>;
  callRequests: CallRequests;
  carriers: Record<Mode, Carrier>;
  /** Runs one dialler round now (tests and the console). */
  dialNow: () => Promise<number>;
  webhooks: EntityRegistry<WebhooksMessage, WebhooksReplies, WebhooksState>;
  /** Runs one webhook sender round now and waits for its attempts. */
  sendNow: () => Promise<number>;
  /** One actor per chat session (the sales-coach assistant). */
  chatSessions: ChatSessionRegistry;
  /** Where the carrier's reports land first (stored, then processed, retried until they are). */
  carrierInbox: CarrierInbox;
  /** Runs one call keeper round now (inbox retries, leases, recovery, overdue events): tests and the console. */
  keepNow: () => Promise<unknown>;
}
