import type { App } from './app-type.ts';
import type { ConsoleBilling } from '../../actors/console/billing.ts';
import { consoleCaller } from '../plugins/console-session.ts';
import { roleMay } from '../../actors/account/console-roles.ts';
import { responses } from '../schemas/common.ts';
import { ConsoleModeQuery, ConsoleOverviewSchema } from '../schemas/console-billing.ts';

/** What the overview route uses. */
export interface ConsoleOverviewRouteDeps {
  consoleBilling: ConsoleBilling;
}

/** GET /console/api/overview: every role reads it; the money block only with billing:read. */
export function registerConsoleOverviewRoutes(app: App, services: ConsoleOverviewRouteDeps): void {
  app.get(
    '/console/api/overview',
    {
      config: { auth: 'session', permission: 'account:read' },
      schema: { hide: true, tags: ['console'], querystring: ConsoleModeQuery, response: responses({ 200: ConsoleOverviewSchema }, ['invalid_parameter'], { auth: 'session' }) },
    },
    async (request) => {
      const s = consoleCaller(request);
      return services.consoleBilling.overview(s.accountId, request.query.mode ?? 'test', roleMay(s.role, 'billing:read'));
    },
  );
}
