import crypto from 'node:crypto';
import type { App } from './app-type.ts';
import type { AccountRegistry } from './deps.ts';
import { ApiKeySchema, AdminAccountSchema } from '../schemas/account.ts';
import { BusinessDetailsSchema } from '../schemas/console-devs.ts';
import { ListOf, MAX_CENTS, MAX_INT4, ModeSchema, Nullable, PageQuery, responses, Type, withCode } from '../schemas/common.ts';
import { SCOPES } from '../../actors/account/api-key-rules.ts';
import { LIMIT_FIELDS } from '../../db/accounts.ts';
import type { AccountDirectory } from '../../actors/account/account-directory.ts';
import { pageOf } from './helpers.ts';
import { EmailSchema } from '../schemas/console.ts';
import type { ConsolePeople } from '../../actors/console/people.ts';
import type { ConsoleAccess } from '../../actors/console/access.ts';
import type { Config } from '../../runtime/config.ts';
import { ApiError } from '../errors.ts';

const AccountParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const KeyParams = Type.Object({ id: Type.String({ format: 'uuid' }), key_id: Type.String({ format: 'uuid' }) });
const Country = withCode(Type.String({ pattern: '^[A-Za-z]{2}$' }), 'invalid_parameter');

const ADMIN = { auth: 'admin' as const };
const hide = { hide: true, tags: ['admin'] };

const positive = withCode(Type.Integer({ minimum: 1, maximum: MAX_INT4 }), 'invalid_limit');
const nullableCount = { ...withCode(Nullable(Type.Integer()), 'invalid_limit'), minimum: 0, maximum: MAX_INT4 };
const nullableCents = { ...withCode(Nullable(Type.Integer()), 'invalid_limit'), minimum: 0, maximum: MAX_CENTS };

/** What these routes use. */
export interface AdminAccountRouteDeps {
  accounts: AccountRegistry;
  accountDirectory: AccountDirectory;
  consolePeople: ConsolePeople;
  consoleAccess: ConsoleAccess;
  config: Config;
}

/** An account just created with its owner's email: the account plus the owner's invitation link (shown once). */
const CreatedAccountSchema = Type.Object({
  ...AdminAccountSchema.properties,
  owner_invitation: Type.Optional(Type.Object({ url: Type.String(), expires_at: Type.String({ format: 'date-time' }) })),
});

/** Operator actions on accounts and keys (the spec's "in the console"). */
export function registerAdminAccountRoutes(app: App, services: AdminAccountRouteDeps): void {
  const ask = services.accounts.ask.bind(services.accounts);

  app.post(
    '/admin/v1/accounts',
    {
      config: ADMIN,
      schema: {
        ...hide,
        body: Type.Object(
          {
            name: withCode(Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', format: 'single-line' }), { default: 'parameter_missing', format: 'invalid_parameter', maxLength: 'field_too_long', type: 'invalid_parameter' }),
            country: Country,
            owner_email: Type.Optional(EmailSchema),
          },
          { additionalProperties: false },
        ),
        response: responses({ 201: CreatedAccountSchema }, ['parameter_missing', 'invalid_parameter', 'email_taken'], { auth: 'admin' }),
      },
    },
    async (request, reply) => {
      const ownerEmail = request.body.owner_email;
      // Checked first, so a taken address creates no account; the account and then its invitation
      // follow (if the invitation failed after all, POST /admin/v1/accounts/:id/invitations mints one).
      if (ownerEmail !== undefined && (await services.consoleAccess.emailTaken(ownerEmail))) throw new ApiError('email_taken');
      const account = await ask(crypto.randomUUID(), { type: 'create_account', name: request.body.name.trim(), country: request.body.country.toUpperCase() });
      if (ownerEmail === undefined) return reply.code(201).send(account);
      const { invitation, url } = await services.consolePeople.invite({ accountId: account.id, email: ownerEmail, role: 'owner', invitedBy: null });
      return reply.code(201).send({ ...account, owner_invitation: { url, expires_at: invitation.expires_at.toISOString() } });
    },
  );

  app.get(
    '/admin/v1/accounts',
    { config: ADMIN, schema: { ...hide, querystring: PageQuery, response: responses({ 200: ListOf(AdminAccountSchema) }, ['invalid_cursor'], { auth: 'admin' }) } },
    async (request) => services.accountDirectory.list(pageOf(request.query)),
  );

  app.get(
    '/admin/v1/accounts/:id',
    { config: ADMIN, schema: { ...hide, params: AccountParams, response: responses({ 200: AdminAccountSchema }, ['account_not_found'], { auth: 'admin' }) } },
    async (request) => ask(request.params.id, { type: 'get_account' }),
  );

  app.post(
    '/admin/v1/accounts/:id/keys',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: AccountParams,
        body: Type.Object(
          {
            mode: withCode(ModeSchema, 'invalid_parameter'),
            label: Type.String({ minLength: 1, maxLength: 200 }),
            scopes: Type.Optional(withCode(Type.Array(Type.String({ maxLength: 64 }), { maxItems: SCOPES.length }), 'invalid_scope')),
            ip_allowlist: Type.Optional(withCode(Nullable(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })), 'invalid_ip_allowlist')),
            expires_at: Type.Optional(withCode(Nullable(Type.String({ maxLength: 40 })), 'invalid_expires_at')),
          },
          { additionalProperties: false },
        ),
        response: responses({ 201: ApiKeySchema }, ['account_not_found', 'invalid_scope', 'invalid_ip_allowlist', 'invalid_expires_at', 'kyb_incomplete'], {
          auth: 'admin',
        }),
      },
    },
    async (request, reply) => reply.code(201).send(await ask(request.params.id, { type: 'create_key', input: request.body })),
  );

  app.get(
    '/admin/v1/accounts/:id/keys',
    { config: ADMIN, schema: { ...hide, params: AccountParams, response: responses({ 200: ListOf(ApiKeySchema) }, ['account_not_found'], { auth: 'admin' }) } },
    async (request) => ask(request.params.id, { type: 'list_keys' }),
  );

  app.post(
    '/admin/v1/accounts/:id/keys/:key_id/rotate',
    {
      config: ADMIN,
      schema: { ...hide, params: KeyParams, response: responses({ 200: ApiKeySchema }, ['key_not_found', 'key_already_revoked'], { auth: 'admin' }) },
    },
    async (request) => ask(request.params.id, { type: 'rotate_key', keyId: request.params.key_id }),
  );

  app.delete(
    '/admin/v1/accounts/:id/keys/:key_id',
    {
      config: ADMIN,
      schema: { ...hide, params: KeyParams, response: responses({ 200: ApiKeySchema }, ['key_not_found', 'key_already_revoked'], { auth: 'admin' }) },
    },
    async (request) => ask(request.params.id, { type: 'revoke_key', keyId: request.params.key_id }),
  );

  app.post(
    '/admin/v1/accounts/:id/kyb',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: AccountParams,
        body: Type.Object(
          {
            status: withCode(Type.String({ enum: ['pending', 'verified', 'rejected'] }), 'invalid_parameter'),
            // Shown to the reseller on its going-live page (why it was rejected); cleared by the next review.
            note: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
          },
          { additionalProperties: false },
        ),
        response: responses({ 200: AdminAccountSchema }, ['account_not_found', 'invalid_parameter'], { auth: 'admin' }),
      },
    },
    async (request) =>
      ask(request.params.id, { type: 'set_kyb', status: request.body.status as 'pending' | 'verified' | 'rejected', note: request.body.note?.trim() || null }),
  );

  // The business details the reseller submitted in the console (console-going-live.ts), for review with POST …/kyb.
  app.get(
    '/admin/v1/accounts/:id/business_details',
    { config: ADMIN, schema: { ...hide, params: AccountParams, response: responses({ 200: BusinessDetailsSchema }, ['account_not_found'], { auth: 'admin' }) } },
    async (request) => ask(request.params.id, { type: 'get_business_details' }),
  );

  app.post(
    '/admin/v1/accounts/:id/agreement',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: AccountParams,
        body: Type.Object(
          { version: withCode(Type.String({ minLength: 1, maxLength: 64, pattern: '\\S' }), 'parameter_missing') },
          { additionalProperties: false },
        ),
        response: responses({ 200: AdminAccountSchema }, ['account_not_found', 'parameter_missing'], { auth: 'admin' }),
      },
    },
    // Trimmed, so " v2" re-signs nothing when "v2" is on file.
    async (request) => ask(request.params.id, { type: 'sign_agreement', version: request.body.version.trim() }),
  );

  app.post(
    '/admin/v1/accounts/:id/go_live',
    { config: ADMIN, schema: { ...hide, params: AccountParams, response: responses({ 200: AdminAccountSchema }, ['account_not_found', 'go_live_blocked'], { auth: 'admin' }) } },
    async (request) => ask(request.params.id, { type: 'go_live' }),
  );

  app.post(
    '/admin/v1/accounts/:id/suspend',
    { config: ADMIN, schema: { ...hide, params: AccountParams, response: responses({ 200: AdminAccountSchema }, ['account_not_found'], { auth: 'admin' }) } },
    async (request) => ask(request.params.id, { type: 'set_status', status: 'suspended' }),
  );

  app.post(
    '/admin/v1/accounts/:id/reinstate',
    { config: ADMIN, schema: { ...hide, params: AccountParams, response: responses({ 200: AdminAccountSchema }, ['account_not_found'], { auth: 'admin' }) } },
    async (request) => ask(request.params.id, { type: 'set_status', status: 'active' }),
  );

  app.patch(
    '/admin/v1/accounts/:id/limits',
    {
      config: ADMIN,
      schema: {
        ...hide,
        params: AccountParams,
        body: Type.Object(
          {
            requests_per_minute: Type.Optional(positive),
            burst: Type.Optional(positive),
            concurrent_calls: Type.Optional(withCode(Type.Integer({ minimum: 0, maximum: MAX_INT4 }), 'invalid_limit')),
            max_customers: Type.Optional(nullableCount),
            daily_spend_cap_cents: Type.Optional(nullableCents),
            monthly_spend_cap_cents: Type.Optional(nullableCents),
          },
          { additionalProperties: false },
        ),
        response: responses({ 200: AdminAccountSchema }, ['account_not_found', 'invalid_limit'], { auth: 'admin' }),
      },
    },
    async (request) => {
      const patch = Object.fromEntries(Object.entries(request.body).filter(([k]) => (LIMIT_FIELDS as readonly string[]).includes(k)));
      return ask(request.params.id, { type: 'update_limits', patch });
    },
  );
}
