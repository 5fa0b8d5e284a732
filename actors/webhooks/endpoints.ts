import type { Deps } from '../../runtime/deps.ts';
import type { Mode } from '../../runtime/types.ts';
import type { SecretBox } from '../../runtime/secret-box.ts';
import { createWebhookRepository } from '../../db/webhooks.ts';
import { createAccountRepository } from '../../db/accounts.ts';
import { Refusal } from '../../runtime/refusal.ts';
import { pageStart, toList } from '../shared/list.ts';
import { newSigningSecret } from './signing.ts';
import { checkEndpointUrl } from './address-guard.ts';
import { deliveryView, endpointView } from './views.ts';
import { EVENT_TYPES } from './event-types.ts';

// The lists live in a module of their own, pure, so the console's page can show them too.
export { EVENT_TYPES, MAX_ROLL_GRACE_SECONDS } from './event-types.ts';

/** Webhook endpoints are console-only (spec: Authentication 7). */
export function createWebhookEndpoints(deps: Deps & { secrets: SecretBox; allowPrivate: boolean }) {
  // Endpoints, secret grace windows and resends are on real time: the sender signs and schedules on it.
  const { pool, realClock: clock, secrets } = deps;
  const repo = () => createWebhookRepository(pool);

  async function mustAccount(accountId: string) {
    if (!(await createAccountRepository(pool).get(accountId))) throw new Refusal('account_not_found');
  }
  async function mustEndpoint(accountId: string, id: string) {
    const e = await repo().getEndpoint(accountId, id);
    if (!e) throw new Refusal('webhook_endpoint_not_found');
    return e;
  }
  async function checkUrl(url: string, mode: Mode) {
    const verdict = await checkEndpointUrl(url, { mode, allowPrivate: deps.allowPrivate });
    if (!verdict.ok) throw new Refusal('invalid_webhook_url', `The endpoint URL is refused: ${verdict.reason}.`);
  }
  function checkTypes(types: string[]) {
    const unknown = types.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
    if (unknown.length) throw new Refusal('invalid_event_type', `Unknown event type(s): ${unknown.join(', ')}.`);
  }

  return {
    async create(accountId: string, input: { url: string; mode: Mode; event_types?: string[]; description?: string | null; enabled?: boolean }) {
      await mustAccount(accountId);
      await checkUrl(input.url, input.mode);
      checkTypes(input.event_types ?? []);
      const secret = newSigningSecret();
      const row = await repo().insertEndpoint({
        accountId,
        mode: input.mode,
        url: input.url,
        description: input.description ?? null,
        eventTypes: [...new Set(input.event_types ?? [])],
        secret: secrets.seal(secret),
        now: clock.now(),
      });
      if (input.enabled === false) return endpointView(await repo().updateEndpoint(row.id, { enabled: false }), secret);
      return endpointView(row, secret);
    },

    async list(accountId: string) {
      await mustAccount(accountId);
      const rows = await repo().listEndpoints(accountId);
      return toList(rows, rows.length, (r) => endpointView(r));
    },

    async get(accountId: string, id: string) {
      return endpointView(await mustEndpoint(accountId, id));
    },

    async update(accountId: string, id: string, patch: { url?: string; mode?: Mode; event_types?: string[]; description?: string | null; enabled?: boolean }) {
      const e = await mustEndpoint(accountId, id);
      // A move to live mode must pass live's rules (https) with the URL it will have.
      if (patch.url !== undefined || (patch.mode !== undefined && patch.mode !== e.mode)) await checkUrl(patch.url ?? e.url, patch.mode ?? e.mode);
      if (patch.event_types) checkTypes(patch.event_types);
      const fields: Record<string, unknown> = { updated_at: clock.now() };
      if (patch.url !== undefined) fields.url = patch.url;
      if (patch.mode !== undefined) fields.mode = patch.mode;
      if (patch.event_types !== undefined) fields.event_types = [...new Set(patch.event_types)];
      if (patch.description !== undefined) fields.description = patch.description;
      if (patch.enabled !== undefined) fields.enabled = patch.enabled;
      return endpointView(await repo().updateEndpoint(e.id, fields));
    },

    async remove(accountId: string, id: string) {
      const e = await mustEndpoint(accountId, id);
      const now = clock.now();
      await repo().updateEndpoint(e.id, { deleted_at: now, enabled: false, updated_at: now });
      return { object: 'webhook_endpoint' as const, id: e.id, deleted: true };
    },

    /** A new secret, shown once; the old one keeps signing (second signature) for `graceSeconds`. */
    async rollSecret(accountId: string, id: string, graceSeconds: number) {
      const e = await mustEndpoint(accountId, id);
      const now = clock.now();
      const secret = newSigningSecret();
      const row = await repo().updateEndpoint(e.id, {
        secret_ciphertext: secrets.seal(secret),
        previous_secret_ciphertext: graceSeconds > 0 ? e.secret_ciphertext : null,
        previous_secret_expires_at: graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null,
        updated_at: now,
      });
      return endpointView(row, secret);
    },

    /** A page of the endpoint's deliveries, newest first; `startingAfter` is the last delivery id of the page before. */
    async deliveries(accountId: string, id: string, limit: number, startingAfter?: string) {
      const e = await mustEndpoint(accountId, id);
      const beforeSeq = await pageStart(pool, { limit, startingAfter }, { table: 'webhook_deliveries', endpointId: e.id });
      const rows = await repo().listDeliveries(e.id, limit + 1, beforeSeq);
      return toList(rows, limit, deliveryView);
    },

    async resend(accountId: string, id: string, deliveryId: string) {
      const e = await mustEndpoint(accountId, id);
      const existing = await repo().getDelivery(e.id, deliveryId);
      if (!existing) throw new Refusal('webhook_delivery_not_found');
      const row = await repo().resend(e.id, deliveryId, clock.now());
      if (!row) throw new Refusal('webhook_delivery_in_progress');
      return deliveryView(row);
    },
  };
}

export type WebhookEndpoints = ReturnType<typeof createWebhookEndpoints>;
