import type { FastifyInstance, FastifyBaseLogger, RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

/** The Fastify instance routes register on, typed by their TypeBox schemas. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** Any Fastify instance, whatever its type provider: what plugins install themselves on. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyApp = FastifyInstance<any, any, any, any, any>;
