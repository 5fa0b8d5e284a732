import type { App } from './app-type.ts';
import type { EmailList } from '../../actors/email/email-list.ts';
import { pageQueryWith, responses, Type, withCode, DEFAULT_PAGE_LIMIT } from '../schemas/common.ts';

const ADMIN = { auth: 'admin' as const };
const hide = { hide: true, tags: ['admin'] };
const EmailStatus = Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('dead'), Type.Literal('skipped')]);
const Query = pageQueryWith({
  account_id: Type.Optional(withCode(Type.String({ format: 'uuid' }), 'invalid_parameter')),
  status: Type.Optional(withCode(EmailStatus, 'invalid_parameter')),
});

/** What these routes use. */
export interface AdminEmailRouteDeps {
  emails: EmailList;
}

/** The operator's view of the email outbox (docs/api.md, "Email"): what was sent, waits, died or was skipped, never a link. */
export function registerAdminEmailRoutes(app: App, services: AdminEmailRouteDeps): void {
  app.get(
    '/admin/v1/emails',
    { config: ADMIN, schema: { ...hide, querystring: Query, response: responses({}, ['invalid_parameter', 'invalid_cursor'], { auth: 'admin' }) } },
    async (request) =>
      services.emails.list({
        accountId: request.query.account_id,
        status: request.query.status,
        limit: request.query.limit ?? DEFAULT_PAGE_LIMIT,
        startingAfter: request.query.starting_after,
      }),
  );
}
