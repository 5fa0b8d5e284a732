/**
 * The Twilio carrier: places calls through the REST API (twilio SDK) with inline TwiML that
 * connects the callee to our media server (`<Connect><Stream>`), and fetches recordings. Call
 * progress comes back as signed status callbacks, parsed by `callbacks.ts`. Numbers are searched,
 * bought and released through AvailablePhoneNumbers and IncomingPhoneNumbers, caller IDs verified
 * through OutgoingCallerIds; refusals become `CarrierNumberError`s (`number-errors.ts`).
 */
import twilio from 'twilio';
import type { Logger } from '../../runtime/logger.ts';
import type {
  AvailableNumber,
  BoughtNumber,
  BuyNumberRequest,
  CallerIdStatus,
  CallerIdValidationRequest,
  CallerIdValidationStarted,
  Carrier,
  CarrierCallStatus,
  CarrierStatusReport,
  DialRequest,
  DialResult,
  NumberSearch,
} from '../carrier.ts';
import { twilioNumberError } from './number-errors.ts';
import type { LineType } from '../../runtime/types.ts';

/** The host every REST call and every recording URL of the default region uses. */
const TWILIO_API_ORIGIN = 'https://api.twilio.com';
/** Lookup v2's host; tests send it to the same fake as the REST API. */
const TWILIO_LOOKUPS_ORIGIN = 'https://lookups.twilio.com';
/**
 * Lookup v2 `line_type_intelligence.type` to ours. Twilio does not tell a business landline from
 * a residential one; `caller_name.caller_type` (US numbers) does, so a landline is a business
 * landline only when Twilio says BUSINESS. Every other type (tollFree, premium, pager, …) and a
 * missing answer are `unknown`, which the consent rules read as mobile.
 */
const LINE_TYPES: Readonly<Record<string, LineType>> = {
  mobile: 'mobile',
  landline: 'landline',
  fixedVoip: 'voip',
  nonFixedVoip: 'voip',
};
/** Recordings are fetched only from Twilio's hosts: the request carries our account credentials. */
const TWILIO_HOST = /^(?:[a-z0-9-]+\.)*twilio\.com$/;
const RECORDING_FETCH_TIMEOUT_MS = 30_000;
/** Twilio's AreaCode filter of AvailablePhoneNumbers applies to US and Canadian numbers only. */
const AREA_CODE_COUNTRIES = new Set(['US', 'CA']);
const DEFAULT_SEARCH_LIMIT = 20;
/** Progress we ask for; Twilio reports `answered` with CallStatus `in-progress`. */
const STATUS_EVENTS = ['initiated', 'ringing', 'answered', 'completed'];

export interface TwilioCarrierOptions {
  accountSid: string;
  authToken: string;
  /** For tests: e.g. `http://127.0.0.1:1234`; every `https://api.twilio.com` URL is sent there. */
  apiBaseUrl?: string;
  log: Logger;
}

type RequestOptions = Parameters<InstanceType<typeof twilio.RequestClient>['request']>[0];

/**
 * twilio 6 has no option for the API's base URL, so tests hand the SDK an HTTP client that
 * rewrites the host of every request it makes.
 */
class RewritingRequestClient extends twilio.RequestClient {
  constructor(private readonly rewrite: (uri: string) => string) {
    super({ autoRetry: true });
  }

  override request<TData>(opts: RequestOptions & { data?: TData }) {
    return super.request<TData>({ ...opts, uri: this.rewrite(opts.uri) });
  }
}

export class TwilioCarrier implements Carrier {
  readonly name = 'twilio' as const;
  private readonly client: twilio.Twilio;
  private readonly authHeader: string;
  private readonly apiBaseUrl: string | undefined;
  private readonly log: Logger;

  constructor(options: TwilioCarrierOptions) {
    this.apiBaseUrl = options.apiBaseUrl?.replace(/\/+$/, '');
    this.log = options.log.child({ carrier: 'twilio' });
    this.authHeader = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
    // autoRetry: a 429 (concurrency limit) means the call was not created, so a retry is safe.
    const httpClient = this.apiBaseUrl ? new RewritingRequestClient((uri) => this.rewrite(uri)) : new twilio.RequestClient({ autoRetry: true });
    this.client = twilio(options.accountSid, options.authToken, { httpClient });
  }

  async dial(request: DialRequest): Promise<DialResult> {
    const call = await this.client.calls.create({
      to: request.to,
      from: request.from,
      twiml: streamTwiml(request.mediaUrl, request.callId, request.streamToken),
      statusCallback: request.statusCallbackUrl,
      statusCallbackEvent: STATUS_EVENTS,
      statusCallbackMethod: 'POST',
      // Asynchronous answering-machine detection: the stream connects at once (a person never
      // waits for the verdict) and the verdict, at a machine's message end, is posted to us.
      ...(request.amdCallbackUrl
        ? { machineDetection: 'DetectMessageEnd', asyncAmd: 'true', asyncAmdStatusCallback: request.amdCallbackUrl, asyncAmdStatusCallbackMethod: 'POST' }
        : {}),
      // Not recorded from the answer: recording starts after the opening's notice (startRecording).
      timeout: request.ringTimeoutSeconds,
      timeLimit: request.timeLimitSeconds,
    });
    this.log.info({ callId: request.callId, carrierCallId: call.sid }, 'twilio call created');
    return { carrierCallId: call.sid };
  }

  async fetchStatus(callId: string, carrierCallId: string): Promise<CarrierStatusReport | null> {
    try {
      const call = await this.client.calls(carrierCallId).fetch();
      const report: CarrierStatusReport = { callId, carrierCallId, status: call.status as CarrierCallStatus };
      if (call.duration !== null && call.duration !== undefined && /^\d+$/.test(String(call.duration))) report.durationSeconds = Number(call.duration);
      if (call.answeredBy) report.answeredBy = call.answeredBy;
      return report;
    } catch (err) {
      if ((err as { status?: number }).status === 404) return null;
      throw err;
    }
  }

  /** `completed` hangs up whatever state the call is in (`canceled` would spare an answered call). */
  async hangup(carrierCallId: string): Promise<void> {
    await this.client.calls(carrierCallId).update({ status: 'completed' });
    this.log.info({ carrierCallId }, 'twilio call hung up');
  }

  async lookupLineType(e164: string): Promise<LineType> {
    const fields = e164.startsWith('+1') ? 'line_type_intelligence,caller_name' : 'line_type_intelligence';
    const found = await this.client.lookups.v2.phoneNumbers(e164).fetch({ fields });
    const type = LINE_TYPES[found.lineTypeIntelligence?.type ?? ''] ?? 'unknown';
    return type === 'landline' && found.callerName?.callerType === 'BUSINESS' ? 'business_landline' : type;
  }

  /**
   * AvailablePhoneNumbers/{country}/Local. A country Twilio sells no numbers in answers 404: to
   * us, like a country without stock, an empty list.
   */
  async searchNumbers(search: NumberSearch): Promise<AvailableNumber[]> {
    const country = search.country.toUpperCase();
    const areaCode = search.areaCode && AREA_CODE_COUNTRIES.has(country) && /^\d{3}$/.test(search.areaCode) ? Number(search.areaCode) : undefined;
    try {
      const found = await this.client.availablePhoneNumbers(country).local.list({ ...(areaCode ? { areaCode } : {}), limit: search.limit ?? DEFAULT_SEARCH_LIMIT });
      return found.map((n) => availableNumber(n, country));
    } catch (err) {
      const mapped = twilioNumberError(err, `search numbers in ${country}`);
      if (mapped.reason === 'not_found') return [];
      throw mapped;
    }
  }

  /** IncomingPhoneNumbers create: buys the number for our account. */
  async buyNumber(request: BuyNumberRequest): Promise<BoughtNumber> {
    try {
      const bought = await this.client.incomingPhoneNumbers.create({
        phoneNumber: request.e164,
        ...(request.statusCallbackUrl ? { statusCallback: request.statusCallbackUrl, statusCallbackMethod: 'POST' } : {}),
        ...(request.voiceUrl ? { voiceUrl: request.voiceUrl, voiceMethod: 'POST' } : {}),
      });
      this.log.info({ carrierNumberId: bought.sid, e164: bought.phoneNumber }, 'twilio number bought');
      return { carrierNumberId: bought.sid, e164: bought.phoneNumber };
    } catch (err) {
      throw twilioNumberError(err, `buy ${request.e164}`);
    }
  }

  async releaseNumber(carrierNumberId: string): Promise<void> {
    try {
      await this.client.incomingPhoneNumbers(carrierNumberId).remove();
      this.log.info({ carrierNumberId }, 'twilio number released');
    } catch (err) {
      throw twilioNumberError(err, `release ${carrierNumberId}`);
    }
  }

  /** OutgoingCallerIds (a ValidationRequest): Twilio calls the number and answers the code it will ask for. */
  async startCallerIdValidation(request: CallerIdValidationRequest): Promise<CallerIdValidationStarted> {
    try {
      const started = await this.client.validationRequests.create({
        phoneNumber: request.e164,
        friendlyName: request.friendlyName.slice(0, 64),
        statusCallback: request.statusCallbackUrl,
        statusCallbackMethod: 'POST',
      });
      this.log.info({ e164: request.e164, carrierCallId: started.callSid }, 'twilio caller id validation started');
      return { validationCode: String(started.validationCode), ...(started.callSid ? { carrierCallId: started.callSid } : {}) };
    } catch (err) {
      throw twilioNumberError(err, `validate caller id ${request.e164}`);
    }
  }

  async callerIdStatus(e164: string): Promise<CallerIdStatus> {
    try {
      const [found] = await this.client.outgoingCallerIds.list({ phoneNumber: e164, limit: 1 });
      return found ? { verified: true, carrierCallerIdId: found.sid } : { verified: false };
    } catch (err) {
      throw twilioNumberError(err, `caller id status of ${e164}`);
    }
  }

  async removeCallerId(carrierCallerIdId: string): Promise<void> {
    try {
      await this.client.outgoingCallerIds(carrierCallerIdId).remove();
      this.log.info({ carrierCallerIdId }, 'twilio caller id removed');
    } catch (err) {
      throw twilioNumberError(err, `remove caller id ${carrierCallerIdId}`);
    }
  }

  /** Calls/{sid}/Recordings create: a dual-channel recording of the call from now on. */
  async startRecording(carrierCallId: string, recordingCallbackUrl: string): Promise<void> {
    await this.client.calls(carrierCallId).recordings.create({
      recordingChannels: 'dual',
      recordingStatusCallback: recordingCallbackUrl,
      recordingStatusCallbackEvent: ['completed'],
      recordingStatusCallbackMethod: 'POST',
    });
    this.log.info({ carrierCallId }, 'twilio recording started');
  }

  /** `Twilio.CURRENT` names the call's recording in progress; `stopped` ends it (what was recorded stays). */
  async stopRecording(carrierCallId: string): Promise<void> {
    await this.client.calls(carrierCallId).recordings('Twilio.CURRENT').update({ status: 'stopped' });
    this.log.info({ carrierCallId }, 'twilio recording stopped');
  }

  async fetchRecording(recordingUrl: string): Promise<{ contentType: string; body: Buffer }> {
    const target = this.recordingAudioUrl(recordingUrl);
    const res = await fetch(target, {
      headers: { authorization: this.authHeader },
      signal: AbortSignal.timeout(RECORDING_FETCH_TIMEOUT_MS),
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`Twilio recording fetch failed: HTTP ${res.status}`);
    }
    return { contentType: res.headers.get('content-type') ?? 'audio/x-wav', body: Buffer.from(await res.arrayBuffer()) };
  }

  private rewrite(uri: string): string {
    if (!this.apiBaseUrl) return uri;
    const origin = [TWILIO_API_ORIGIN, TWILIO_LOOKUPS_ORIGIN].find((o) => uri.startsWith(o));
    return origin ? this.apiBaseUrl + uri.slice(origin.length) : uri;
  }

  /** Twilio's RecordingUrl has no extension; `.wav` asks for the WAV rendition. */
  private recordingAudioUrl(recordingUrl: string): string {
    const url = new URL(this.rewrite(recordingUrl));
    const allowed = this.apiBaseUrl ? url.origin === new URL(this.apiBaseUrl).origin : url.protocol === 'https:' && TWILIO_HOST.test(url.hostname);
    if (!allowed) throw new Error(`refusing to send Twilio credentials to ${url.origin}`);
    if (!url.pathname.endsWith('.wav')) url.pathname += '.wav';
    return url.toString();
  }
}

/**
 * One AvailablePhoneNumber as ours. Twilio names capabilities `SMS`/`MMS` in this resource's JSON
 * and `sms`/`mms` in IncomingPhoneNumbers; the SDK passes either through, so both are read.
 */
function availableNumber(n: { phoneNumber: string; isoCountry?: string; locality?: string | null; region?: string | null; capabilities?: unknown }, country: string): AvailableNumber {
  const caps = (n.capabilities ?? {}) as Record<string, unknown>;
  const flag = (name: string) => caps[name] === true || caps[name.toUpperCase()] === true;
  const out: AvailableNumber = { e164: n.phoneNumber, country: n.isoCountry || country, capabilities: { voice: flag('voice'), sms: flag('sms'), mms: flag('mms') } };
  if (n.locality) out.locality = n.locality;
  if (n.region) out.region = n.region;
  return out;
}

/** `<Response><Connect><Stream url><Parameter name="call_id"/></Stream></Connect></Response>` */
export function streamTwiml(mediaUrl: string, callId: string, streamToken?: string): string {
  const response = new twilio.twiml.VoiceResponse();
  const stream = response.connect().stream({ url: mediaUrl });
  stream.parameter({ name: 'call_id', value: callId });
  if (streamToken) stream.parameter({ name: 'stream_token', value: streamToken });
  return response.toString();
}
