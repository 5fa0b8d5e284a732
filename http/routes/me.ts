import type { App } from './app-type.ts';
import type { AccountRegistry } from './deps.ts';
import { AccountSchema } from '../schemas/account.ts';
import { responses } from '../schemas/common.ts';
import { caller } from './helpers.ts';

/** What these routes use. */
export interface MeRouteDeps {
  accounts: AccountRegistry;
}

export function registerMeRoutes(app: App, services: MeRouteDeps): void {
  app.get(
    '/v1/me',
    {
      config: { beforeGoLive: true },
      schema: {
        operationId: 'getMe',
        summary: 'The account and the key making the request',
        description: "Who is calling: the account, its onboarding state and limits, and the calling key's mode and scopes.",
        tags: ['account'],
        response: responses({ 200: AccountSchema }, []),
      },
    },
    async (request) => {
      const auth = caller(request);
      return services.accounts.ask(auth.accountId, { type: 'get_me', keyId: auth.keyId, mode: auth.mode });
    },
  );
}
