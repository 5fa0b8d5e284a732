import formbody from '@fastify/formbody';
import type { App } from './app-type.ts';
import type { Config } from '../../runtime/config.ts';
import { Type } from '../schemas/common.ts';
import { ApiError } from '../errors.ts';
import { isForeignKeyViolation } from '../../db/pool.ts';
import type { CarrierInbox, CarrierReport } from '../../actors/call/carrier-inbox.ts';
import type { Numbers } from '../../actors/numbers/numbers.ts';
import {
  CarrierCallbackError,
  parseAmdCallback,
  parseCallerIdValidationCallback,
  parseRecordingCallback,
  parseStatusCallback,
  verifyTwilioSignature,
  type TwilioForm,
} from '../../telephony/twilio/callbacks.ts';

/**
 * The carrier's callbacks (Twilio: form-encoded POSTs signed with X-Twilio-Signature over our
 * public URL and the form). Nothing is acted on before the signature is checked.
 */
/** What these routes use. */
export interface TelephonyRouteDeps {
  /** Twilio's credentials and the public URL its signatures are made over. */
  config: Pick<Config, 'twilio' | 'publicUrl'>;
  carrierInbox: Pick<CarrierInbox, 'receive'>;
  /** Where a caller ID verification's outcome goes (the numbers room). */
  numbers: Pick<Numbers, 'verificationReported'>;
}

type TwilioRequest = { url: string; headers: Record<string, unknown>; body: unknown };

/** The callback's form once its X-Twilio-Signature matches (our public URL and the form); 403 otherwise, 404 without Twilio. */
export function verifiedTwilioForm(config: Pick<Config, 'twilio' | 'publicUrl'>, request: TwilioRequest): TwilioForm {
  const twilio = config.twilio;
  if (!twilio) throw new ApiError('route_not_found');
  const form = (request.body ?? {}) as TwilioForm;
  const signature = request.headers['x-twilio-signature'] as string | undefined;
  if (!verifyTwilioSignature(twilio.authToken, `${config.publicUrl}${request.url}`, form, signature)) {
    throw new ApiError('invalid_twilio_signature');
  }
  return form;
}

export async function registerTelephonyRoutes(app: App, services: TelephonyRouteDeps): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: 64 * 1024 });
    const typed = scope as unknown as App;
    const query = Type.Object({ call_id: Type.String({ format: 'uuid' }) });

    const verified = (request: TwilioRequest): TwilioForm => verifiedTwilioForm(services.config, request);

    const store = async (r: CarrierReport) => {
      try {
        await services.carrierInbox.receive(r);
      } catch (err) {
        if (isForeignKeyViolation(err)) throw new ApiError('invalid_parameter', 'The callback names a call that does not exist.');
        throw err;
      }
    };

    typed.post('/telephony/twilio/status', { config: { auth: 'none' }, schema: { hide: true, querystring: query } }, async (request, reply) => {
      const form = verified(request);
      let report;
      try {
        report = parseStatusCallback(request.query.call_id, form);
      } catch {
        throw new ApiError('invalid_parameter', 'The status callback is malformed.');
      }
      // Stored before the answer; processed now if it can be, retried if not (the inbox).
      await store({ kind: 'status', report });
      return reply.code(204).send();
    });

    typed.post('/telephony/twilio/recording', { config: { auth: 'none' }, schema: { hide: true, querystring: query } }, async (request, reply) => {
      const form = verified(request);
      let report;
      try {
        report = parseRecordingCallback(request.query.call_id, form);
      } catch (err) {
        // A recording Twilio reports as absent or failed has no audio: acknowledged, nothing stored.
        if (err instanceof CarrierCallbackError && err.reason === 'not_completed') return reply.code(204).send();
        throw new ApiError('invalid_parameter', 'The recording callback is malformed.');
      }
      await store({ kind: 'recording', report });
      return reply.code(204).send();
    });

    // The asynchronous answering-machine verdict (AsyncAmdStatusCallback), stored and processed
    // once like the status callback.
    typed.post('/telephony/twilio/amd', { config: { auth: 'none' }, schema: { hide: true, querystring: query } }, async (request, reply) => {
      const form = verified(request);
      let report;
      try {
        report = parseAmdCallback(request.query.call_id, form);
      } catch {
        throw new ApiError('invalid_parameter', 'The answering machine detection callback is malformed.');
      }
      await store({ kind: 'amd', report });
      return reply.code(204).send();
    });

    // A caller ID verification's outcome (OutgoingCallerIds ValidationRequest StatusCallback). Acted
    // on at once: the report changes only a number still verifying, so a repeat changes nothing,
    // and a lost one is recovered when the verification expires (the carrier is asked then).
    const numberQuery = Type.Object({ number_id: Type.String({ format: 'uuid' }) });
    typed.post('/telephony/twilio/caller-id', { config: { auth: 'none' }, schema: { hide: true, querystring: numberQuery } }, async (request, reply) => {
      const form = verified(request);
      let report;
      try {
        report = parseCallerIdValidationCallback(form);
      } catch {
        throw new ApiError('invalid_parameter', 'The caller ID verification callback is malformed.');
      }
      await services.numbers.verificationReported(request.query.number_id, report);
      return reply.code(204).send();
    });
  });
}
