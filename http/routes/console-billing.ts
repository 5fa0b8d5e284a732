import { Readable } from 'node:stream';
import type { App } from './app-type.ts';
import type { ConsoleBilling, LedgerQuery } from '../../actors/console/billing.ts';
import { consoleCaller } from '../plugins/console-session.ts';
import { ListOf, responses, Type } from '../schemas/common.ts';
import { BalanceSchema, UsageEntrySchema } from '../schemas/money.ts';
import { ActivityQuerySchema, ActivitySchema, ConsoleModeQuery, LedgerCsvQuerySchema, LedgerQuerySchema } from '../schemas/console-billing.ts';
import { pageOf } from './helpers.ts';

/** What the billing routes use. */
export interface ConsoleBillingRouteDeps {
  consoleBilling: ConsoleBilling;
}

const BILLING = { auth: 'session' as const, permission: 'billing:read' as const };
const hide = { hide: true, tags: ['console'] };

function ledgerQueryOf(q: { customer_id?: string; type?: string; from?: string; to?: string }): LedgerQuery {
  return { customer: q.customer_id ?? null, type: q.type ?? null, from: q.from ? new Date(q.from) : null, to: q.to ? new Date(q.to) : null };
}

/** The console's billing pages: balance, ledger (list and CSV) and the activity log (billing:read). */
export function registerConsoleBillingRoutes(app: App, services: ConsoleBillingRouteDeps): void {
  const billing = services.consoleBilling;

  app.get(
    '/console/api/billing/balance',
    { config: BILLING, schema: { ...hide, querystring: ConsoleModeQuery, response: responses({ 200: BalanceSchema }, ['invalid_parameter'], { auth: 'session' }) } },
    async (request) => billing.balance(consoleCaller(request).accountId, request.query.mode ?? 'test'),
  );

  app.get(
    '/console/api/billing/ledger',
    {
      config: BILLING,
      schema: {
        ...hide,
        querystring: LedgerQuerySchema,
        response: responses({ 200: ListOf(UsageEntrySchema) }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor'], { auth: 'session' }),
      },
    },
    async (request) => billing.ledger(consoleCaller(request).accountId, request.query.mode ?? 'test', ledgerQueryOf(request.query), pageOf(request.query)),
  );

  app.get(
    '/console/api/billing/ledger.csv',
    {
      config: BILLING,
      schema: {
        ...hide,
        querystring: LedgerCsvQuerySchema,
        response: responses({ 200: Type.String({ description: 'text/csv, a header row then one row per line' }) }, ['customer_not_found', 'invalid_parameter'], { auth: 'session' }),
      },
    },
    async (request, reply) => {
      const csv = await billing.ledgerCsv(consoleCaller(request).accountId, request.query.mode ?? 'test', ledgerQueryOf(request.query));
      return reply
        .header('content-type', 'text/csv; charset=utf-8; header=present')
        .header('content-disposition', `attachment; filename="${csv.filename}"`)
        .header('cache-control', 'no-store')
        .send(Readable.from(csv.rows));
    },
  );

  app.get(
    '/console/api/billing/activity',
    {
      config: BILLING,
      schema: { ...hide, querystring: ActivityQuerySchema, response: responses({ 200: ListOf(ActivitySchema) }, ['invalid_parameter', 'invalid_cursor'], { auth: 'session' }) },
    },
    async (request) => billing.activity(consoleCaller(request).accountId, request.query.mode ?? 'test', pageOf(request.query)),
  );
}
