import crypto from 'node:crypto';
import type { Deps } from '../../runtime/deps.ts';
import { createCalendarLinkRepository, type CalendarLinkRow } from '../../db/calendar-links.ts';
import { createCalendarConnectionRepository } from '../../db/calendar-connections.ts';
import { createCustomerRepository, type CustomerRow } from '../../db/customers.ts';
import { createAccountRepository, type AccountRow } from '../../db/accounts.ts';
import { createCoverageRepository } from '../../db/coverage.ts';
import { hashToken, isWellFormed } from '../../runtime/tokens.ts';
import type { CalendarCredentials } from '../../calendars/calendar.ts';
import type { CalendarOAuth } from '../../calendars/oauth.ts';
import { CALENDAR_TOKEN_PREFIX } from './customer-actor.ts';
import { calendarConnectionView, failureOf, type CalendarConnectionView } from './calendar-connection.ts';

export type CalendarLinkState = 'active' | 'replaced' | 'expired';

export interface OpenedCalendarLink {
  link: CalendarLinkRow;
  state: CalendarLinkState;
  customer: CustomerRow;
  account: AccountRow;
  /** The customer's calling language: the page is written in it. */
  locale: string | null;
  connection: CalendarConnectionView;
  /** The OAuth choices the page offers (live customers only, and only those the operator configured). */
  oauth: ('google' | 'microsoft')[];
}

export interface CalendarPageDeps extends Pick<Deps, 'pool' | 'clock'> {
  /** The secret box's MAC: the OAuth `state` is signed with it. */
  secrets: { mac(purpose: string, text: string): string };
  oauth: { google: CalendarOAuth | null; microsoft: CalendarOAuth | null };
  /** Where the providers send the customer back: the service's public URL + /calendar/oauth/callback (registered with each provider). */
  redirectUri: () => string;
}

const STATE_PURPOSE = 'calendar_oauth_state';

/**
 * The links behind /calendar/{token}, read for the page a customer opens, and the OAuth
 * round trip (Google, Microsoft): a `state` signed with the secret box and bound to the link,
 * used once. Connecting is the customer actor's (`calendar_connect`).
 */
export function createCalendarPage(deps: CalendarPageDeps) {
  const { pool, clock } = deps;
  const offered = (mode: string): ('google' | 'microsoft')[] =>
    mode === 'live' ? (['google', 'microsoft'] as const).filter((k) => deps.oauth[k] !== null) : [];

  async function opened(link: CalendarLinkRow): Promise<OpenedCalendarLink | null> {
    const now = clock.now();
    const [customer, account, connection] = await Promise.all([
      createCustomerRepository(pool).get(link.customer_id),
      createAccountRepository(pool).get(link.account_id),
      createCalendarConnectionRepository(pool).get(link.customer_id),
    ]);
    if (!customer || !account) return null;
    const country = await createCoverageRepository(pool).get(customer.country);
    const state: CalendarLinkState = link.status === 'active' && link.expires_at <= now ? 'expired' : link.status;
    return { link, state, customer, account, locale: country?.calling_language ?? null, connection: calendarConnectionView(customer.id, connection), oauth: offered(customer.mode) };
  }

  return {
    /** The link a token in a calendar URL names, with what its page shows; null for any bad token. */
    async open(token: string): Promise<OpenedCalendarLink | null> {
      if (!isWellFormed(token, CALENDAR_TOKEN_PREFIX)) return null;
      const link = await createCalendarLinkRepository(pool).findByTokenHash(hashToken(token));
      return link ? opened(link) : null;
    },

    /**
     * Where to send the customer's browser to consent: the provider's page, with a `state` of
     * `<link id>.<nonce>.<signature>`; the nonce's hash is kept on the link until the callback.
     */
    async startOAuth(link: CalendarLinkRow, kind: 'google' | 'microsoft'): Promise<string | null> {
      const provider = deps.oauth[kind];
      if (!provider || link.mode !== 'live') return null;
      const nonce = crypto.randomBytes(24).toString('base64url');
      await createCalendarLinkRepository(pool).startOAuth(link.id, kind, hashToken(nonce));
      const unsigned = `${link.id}.${nonce}`;
      return provider.authorizationUrl({ state: `${unsigned}.${deps.secrets.mac(STATE_PURPOSE, unsigned)}`, redirectUri: deps.redirectUri() });
    },

    /**
     * The provider came back: the state is checked (signature, then used once against its link),
     * the code exchanged (`code` null: the customer refused consent, and the state is used up all
     * the same). Null for a state that is forged, used, or of a link no longer active.
     */
    async finishOAuth(state: string, code: string | null): Promise<
      | { opened: OpenedCalendarLink; credentials: CalendarCredentials }
      | { opened: OpenedCalendarLink; failure: string }
      | { opened: OpenedCalendarLink; denied: true }
      | null
    > {
      const [linkId, nonce, signature, extra] = state.split('.');
      if (!linkId || !nonce || !signature || extra !== undefined || !/^[0-9a-f-]{36}$/.test(linkId)) return null;
      const expected = Buffer.from(deps.secrets.mac(STATE_PURPOSE, `${linkId}.${nonce}`));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
      const link = await createCalendarLinkRepository(pool).takeOAuth(linkId, hashToken(nonce), clock.now());
      if (!link || !link.oauth_kind) return null;
      const page = await opened(link);
      const provider = deps.oauth[link.oauth_kind];
      if (!page || !provider) return null;
      if (code === null) return { opened: page, denied: true };
      try {
        return { opened: page, credentials: await provider.exchange({ code, redirectUri: deps.redirectUri() }) };
      } catch (err) {
        return { opened: page, failure: failureOf(err).message };
      }
    },
  };
}

export type CalendarPage = ReturnType<typeof createCalendarPage>;
