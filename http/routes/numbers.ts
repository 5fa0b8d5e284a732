import type { App } from './app-type.ts';
import type { Numbers } from '../../actors/numbers/numbers.ts';
import { NumberOrderBody, NumberParams, NumberSchema } from '../schemas/numbers.ts';
import { CustomerIdParams } from '../schemas/customers.ts';
import { ListOf, PageQuery, responses } from '../schemas/common.ts';
import { customerOwnerOf, pageOf, sendWritten, type CustomerLookupDeps } from './helpers.ts';
import { CREATED_OR_EXISTING } from '../write-status.ts';

/** What these routes use. */
export interface NumberRouteDeps extends CustomerLookupDeps {
  numbers: Pick<Numbers, 'order' | 'get' | 'list' | 'release'>;
}

/** Rows 27 to 29 of the spec: a customer's numbers (docs/api.md, "Numbers"). */
export function registerNumberRoutes(app: App, services: NumberRouteDeps): void {
  const ownerOf = (request: Parameters<typeof customerOwnerOf>[1], id: string) => customerOwnerOf(services, request, id);

  app.post(
    '/v1/customers/:id/numbers',
    {
      config: { scope: 'numbers:order', idempotent: true, writeStatus: CREATED_OR_EXISTING },
      schema: {
        operationId: 'createNumber',
        summary: "Rent a number in the customer's country, or verify the customer's own number as caller ID",
        description:
          "rented (the default): a number in the customer's country is bought (the area code preferred) and its first month (1,500 cents) charged at once. " +
          'caller_id: the carrier calls phone_number and the person types the code in `verification.code`; on success the first month (1,200 cents) is charged. ' +
          'Test mode rents from fictional ranges, prices the rent without charging it, and verifies a caller ID within seconds (one ending in 9 fails).',
        tags: ['numbers'],
        params: CustomerIdParams,
        body: NumberOrderBody,
        response: responses({ 201: NumberSchema }, [
          'customer_not_found', 'country_required', 'no_number_available', 'insufficient_balance', 'parameter_missing', 'invalid_phone_number',
          'phone_country_mismatch', 'number_already_added', 'caller_id_in_use', 'carrier_unavailable', 'invalid_parameter', 'unknown_parameter',
          'caller_id_not_geographic', 'phone_extension_not_allowed', 'verification_in_progress', 'verification_limit_reached', 'verification_daily_limit',
          'invalid_json', 'field_too_long', 'idempotency_key_reused', 'idempotency_key_too_long', 'scope_missing',
        ]),
      },
    },
    async (request, reply) => {
      const owner = await ownerOf(request, request.params.id);
      const body = request.body ?? {};
      return sendWritten(
        reply,
        await services.numbers.order(owner, {
          kind: body.kind ?? 'rented',
          phoneNumber: body.phone_number,
          areaCode: body.area_code,
          idempotency: request.idempotency,
        }),
      );
    },
  );

  app.get(
    '/v1/customers/:id/numbers',
    {
      config: { scope: 'numbers:read' },
      schema: {
        operationId: 'listNumbers',
        summary: "A customer's numbers, newest first (released and failed ones included)",
        description: 'Rented numbers and caller IDs in every status; `limit` and `starting_after` page the list.',
        tags: ['numbers'],
        params: CustomerIdParams,
        querystring: PageQuery,
        response: responses({ 200: ListOf(NumberSchema, 'NumberList') }, ['customer_not_found', 'invalid_parameter', 'invalid_cursor', 'scope_missing']),
      },
    },
    async (request) => services.numbers.list(await ownerOf(request, request.params.id), pageOf(request.query)),
  );

  app.get(
    '/v1/customers/:id/numbers/:number_id',
    {
      config: { scope: 'numbers:read' },
      schema: {
        operationId: 'getNumber',
        summary: 'One number of the customer',
        description: 'While a caller ID is verifying, `verification.code` holds the digits the person types when the carrier calls.',
        tags: ['numbers'],
        params: NumberParams,
        response: responses({ 200: NumberSchema }, ['customer_not_found', 'number_not_found', 'scope_missing']),
      },
    },
    async (request) => services.numbers.get(await ownerOf(request, request.params.id), request.params.number_id),
  );

  app.delete(
    '/v1/customers/:id/numbers/:number_id',
    {
      config: { scope: 'numbers:order' },
      schema: {
        operationId: 'releaseNumber',
        summary: 'Release a number permanently',
        description:
          'Gives the number back to the carrier (a caller ID is removed there); it cannot be had back. The month already paid is not refunded. ' +
          'Releasing a released number answers it as it is.',
        tags: ['numbers'],
        params: NumberParams,
        response: responses({ 200: NumberSchema }, ['customer_not_found', 'number_not_found', 'carrier_unavailable', 'scope_missing']),
      },
    },
    async (request) => services.numbers.release(await ownerOf(request, request.params.id), request.params.number_id),
  );
}
