import type { EntityRegistry } from '../../runtime/actor-system.ts';
import type { AccountMessage, AccountReplies } from '../../actors/account/messages.ts';
import type { AccountState } from '../../actors/account/account-actor.ts';
import type { CustomerMessage, CustomerReplies } from '../../actors/customer/messages.ts';
import type { CustomerState } from '../../actors/customer/customer-actor.ts';
import type { WebhooksMessage, WebhooksReplies } from '../../actors/webhooks/messages.ts';
import type { WebhooksState } from '../../actors/webhooks/webhooks-actor.ts';
import type { createChatSessions } from '../../actors/chat/sessions.ts';

/*
 * The vocabulary of route dependencies. Each route file declares the few it uses (its
 * `…RouteDeps`), in terms of these and of the rooms' own service types; the composition root
 * (app/) builds the one object that satisfies them all. http/ never imports app/.
 */

/** The account actors (one per reseller account). */
export type AccountRegistry = EntityRegistry<AccountMessage, AccountReplies, AccountState>;
/** The customer actors (one per end customer). */
export type CustomerRegistry = EntityRegistry<CustomerMessage, CustomerReplies, CustomerState>;
/** The webhooks actors (one per account: its endpoints and events). */
export type WebhooksRegistry = EntityRegistry<WebhooksMessage, WebhooksReplies, WebhooksState>;
/** What the chat routes ask of chat sessions (actors/chat/sessions.ts), built once by app/. */
export type ChatSessions = ReturnType<typeof createChatSessions>;

/**
 * The shared test clock, present only when SWITCHBOARD_TEST_CLOCK=1: moving it moves every
 * process on the database (app/test-clock.ts).
 */
export interface TestClockControl {
  /** Moves the clock forward by `ms` and publishes the new offset; resolves to the new now. */
  advance(ms: number): Promise<Date>;
}
