import formbody from '@fastify/formbody';
import type { App } from './app-type.ts';
import type { Config } from '../../runtime/config.ts';
import { Type } from '../schemas/common.ts';
import { ApiError } from '../errors.ts';
import type { CarrierInbox } from '../../actors/call/carrier-inbox.ts';
import type { Inbound } from '../../actors/call/inbound.ts';
import { CarrierCallbackError, parseStatusCallback, type TwilioForm } from '../../telephony/twilio/callbacks.ts';
import { verifiedTwilioForm } from './telephony.ts';

/**
 * Calls people make to a customer's rented number (actors/call/inbound.ts): the number's voice
 * webhook, the forward's Dial action, the opt-out keypress and the number's status callback.
 * Twilio signs each request (X-Twilio-Signature over our public URL and the form); nothing is
 * read, recorded or answered before the signature is checked. Answers are TwiML.
 */
export interface TelephonyInboundRouteDeps {
  config: Pick<Config, 'twilio' | 'publicUrl'>;
  inbound: Pick<Inbound, 'answer' | 'dialEnded' | 'keyPressed' | 'callOf'>;
  carrierInbox: Pick<CarrierInbox, 'receive'>;
}

const TWIML = 'text/xml; charset=utf-8';

export async function registerTelephonyInboundRoutes(app: App, services: TelephonyInboundRouteDeps): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: 64 * 1024 });
    const typed = scope as unknown as App;
    const query = Type.Object({ call_id: Type.String({ format: 'uuid' }) });

    const verified = (request: Parameters<typeof verifiedTwilioForm>[1]): TwilioForm => verifiedTwilioForm(services.config, request);
    const text = (form: TwilioForm, name: string): string => {
      const value = form[name];
      return typeof value === 'string' ? value.trim() : '';
    };

    // The voice webhook of every number bought for a customer (VoiceUrl, POST).
    typed.post('/telephony/twilio/inbound', { config: { auth: 'none' }, schema: { hide: true } }, async (request, reply) => {
      const form = verified(request);
      const callSid = text(form, 'CallSid');
      const from = text(form, 'From');
      const to = text(form, 'To');
      if (!/^CA[0-9a-f]{32}$/i.test(callSid) || !to) throw new ApiError('invalid_parameter', 'The voice webhook is malformed.');
      const twiml = await services.inbound.answer({ callSid, from: from || 'anonymous', to });
      return reply.code(200).type(TWIML).send(twiml);
    });

    // The forward's <Dial action>: DialCallStatus says whether the customer's phone answered.
    typed.post('/telephony/twilio/inbound/dial-status', { config: { auth: 'none' }, schema: { hide: true, querystring: query } }, async (request, reply) => {
      const form = verified(request);
      const twiml = await services.inbound.dialEnded(request.query.call_id, text(form, 'DialCallStatus') || 'failed');
      if (twiml === null) throw new ApiError('invalid_parameter', 'The callback names a call that does not exist.');
      return reply.code(200).type(TWIML).send(twiml);
    });

    // The <Gather action> after the opt-out offer: Digits is the key pressed.
    typed.post('/telephony/twilio/inbound/opt-out', { config: { auth: 'none' }, schema: { hide: true, querystring: query } }, async (request, reply) => {
      const form = verified(request);
      const twiml = await services.inbound.keyPressed(request.query.call_id, text(form, 'Digits'));
      if (twiml === null) throw new ApiError('invalid_parameter', 'The callback names a call that does not exist.');
      return reply.code(200).type(TWIML).send(twiml);
    });

    // The number's StatusCallback: an inbound call's progress and end, found by its CallSid and
    // stored in the carrier inbox like a dialled call's report (processed by the call's actor).
    typed.post('/telephony/twilio/inbound/status', { config: { auth: 'none' }, schema: { hide: true } }, async (request, reply) => {
      const form = verified(request);
      const call = await services.inbound.callOf(text(form, 'CallSid'));
      // A call we never recorded (a number nobody rents): nothing to account for.
      if (!call) return reply.code(204).send();
      let report;
      try {
        report = parseStatusCallback(call.id, form);
      } catch (err) {
        if (err instanceof CarrierCallbackError) throw new ApiError('invalid_parameter', 'The status callback is malformed.');
        throw err;
      }
      await services.carrierInbox.receive({ kind: 'status', report });
      return reply.code(204).send();
    });
  });
}
