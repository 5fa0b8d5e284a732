import type { App } from './app-type.ts';
import type { CoverageService } from '../../actors/coverage/coverage-service.ts';
import { CoverageSchema } from '../schemas/customers.ts';
import { ListOf, responses, Type, withCode } from '../schemas/common.ts';

/** What these routes use. */
export interface CoverageRouteDeps {
  coverage: Pick<CoverageService, 'of' | 'all'>;
}

export function registerCoverageRoutes(app: App, services: CoverageRouteDeps): void {
  app.get(
    '/v1/coverage',
    {
      schema: {
        operationId: 'getCoverage',
        summary: 'Coverage of one country (?country=GB) or the list of every opened country',
        description: 'Whether calls can be sold in a country, in which language, and what the service still waits on there.',
        tags: ['coverage'],
        querystring: Type.Object(
          { country: Type.Optional(withCode(Type.String({ pattern: '^[A-Za-z]{2}$', maxLength: 2, description: 'ISO 3166-1 alpha-2 code, such as GB' }), { default: 'invalid_parameter', maxLength: 'invalid_parameter' })) },
          { additionalProperties: false },
        ),
        response: responses({ 200: Type.Union([CoverageSchema, ListOf(CoverageSchema, 'CoverageList', 300)], { description: 'with country: that Coverage; without: a CoverageList of every opened country' }) }, ['invalid_parameter', 'unknown_parameter']),
      },
    },
    async (request) => {
      if (request.query.country) return services.coverage.of(request.query.country);
      const data = await services.coverage.all();
      return { object: 'list' as const, data, has_more: false };
    },
  );
}
