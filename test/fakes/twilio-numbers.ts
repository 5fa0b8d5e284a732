/**
 * The fake Twilio's number resources, as Twilio's REST API answers them: AvailablePhoneNumbers
 * (Local) by country, IncomingPhoneNumbers (buy, release), OutgoingCallerIds (a validation
 * request, its signed status callback, list and delete). The stock is fictional: US and GB sell
 * freely, DE needs a regulatory bundle (21649), FR an address (21631), NZ has none (an empty
 * list), and any other country is one Twilio sells nothing in (404).
 *
 * As unkind as Twilio: lists come in pages (`PageSize`, at most `maxPageSize`, with
 * `next_page_uri` naming the next page, which a client must follow), and a number offered by a
 * search can be sold to someone else before the purchase (`nextSearch({ sellOut })`: the
 * purchase then answers 21422, "PhoneNumber is not available").
 */
import { randomHex } from '../../runtime/tokens.ts';

const API_VERSION = '2010-04-01';
const VALIDATION_DELAY_MS = 50;

interface StockNumber {
  e164: string;
  locality: string;
  region: string;
  postalCode: string;
}

interface CountryStock {
  numbers: StockNumber[];
  /** What Twilio asks for before it sells a number of the country. */
  requires?: 'bundle' | 'address';
}

function range(prefix: string, from: number, count: number, width: number, place: Omit<StockNumber, 'e164'>): StockNumber[] {
  return Array.from({ length: count }, (_, i) => ({ e164: prefix + String(from + i).padStart(width, '0'), ...place }));
}

function initialStock(): Record<string, CountryStock> {
  return {
    US: {
      numbers: [
        ...range('+120255501', 0, 20, 2, { locality: 'Washington', region: 'DC', postalCode: '20001' }),
        ...range('+141555501', 0, 10, 2, { locality: 'San Francisco', region: 'CA', postalCode: '94103' }),
      ],
    },
    GB: { numbers: range('+4420794600', 0, 20, 2, { locality: 'London', region: 'England', postalCode: '' }) },
    DE: { numbers: range('+4930231250', 0, 10, 2, { locality: 'Berlin', region: 'BE', postalCode: '10115' }), requires: 'bundle' },
    FR: { numbers: range('+3319900000', 0, 10, 2, { locality: 'Paris', region: 'IDF', postalCode: '75001' }), requires: 'address' },
    NZ: { numbers: [] },
  };
}

/** How the person answers the next verification call. */
export interface FakeValidationScript {
  /** Default: failed for a number ending in 9, success otherwise (test mode's rule). */
  outcome?: 'success' | 'failed';
  /** Wall time from the request to the callback, ms. Default 50. */
  delayMs?: number;
  /** The callback is lost on the way (never reaches the application); the outcome stands at the carrier. */
  loseCallback?: boolean;
  /**
   * The verification ends at once and its callback goes out before the create is answered, which
   * follows this many ms later: Twilio's two requests race, and the callback can come first.
   */
  answerAfterMs?: number;
}

/** How the next purchase (IncomingPhoneNumbers create) goes. */
export interface FakePurchaseScript {
  /**
   * Awaited after the number is sold and before the answer goes out, for tests that act while a
   * purchase is in flight (a failure answers 500).
   */
  beforeAnswer?: () => Promise<void>;
}

/** How the next search (AvailablePhoneNumbers) goes. */
export interface FakeSearchScript {
  /** Once answered, the first this many numbers it offered are sold to another Twilio customer. */
  sellOut?: number;
}

/** How the next release (IncomingPhoneNumbers DELETE) goes. */
export interface FakeReleaseScript {
  /** Twilio refuses with this error and the number stays bought. */
  error?: { status: number; code: number; message: string };
}

type Answer = { status: number; body: unknown };

export interface FakeIncomingNumber {
  sid: string;
  phoneNumber: string;
  country: string;
  form: Record<string, string[]>;
  releasedAt: number | null;
}

export interface FakeValidation {
  phoneNumber: string;
  callSid: string;
  validationCode: string;
  form: Record<string, string[]>;
  outcome: 'success' | 'failed';
  /** The callback was (scripted to be) lost. */
  loseCallback: boolean;
}

export interface FakeNumbers {
  /** Every number bought, by sid (released ones keep `releasedAt`). */
  incoming: Map<string, FakeIncomingNumber>;
  /** Verified caller IDs, by sid. */
  callerIds: Map<string, { sid: string; phoneNumber: string; friendlyName: string }>;
  validations: FakeValidation[];
  nextValidation(script: FakeValidationScript): void;
  nextPurchase(script: FakePurchaseScript): void;
  nextSearch(script: FakeSearchScript): void;
  /** The largest page the fake answers, whatever PageSize asks (Twilio's is 1,000; tests lower it to make lists page). */
  setMaxPageSize(size: number): void;
  nextRelease(script: FakeReleaseScript): void;
  /** Answers `/2010-04-01/Accounts/{sid}/{rest}` for the number resources (later, when scripted so); null when `rest` is not one. */
  route(method: string, rest: string, form: Record<string, string[]>, query: URLSearchParams): Answer | Promise<Answer> | null;
  close(): void;
}

export interface FakeNumbersDeps {
  accountSid: string;
  apiError: (status: number, code: number, message: string) => { status: number; body: unknown };
  /** Sends a signed callback, as the fake sends call status callbacks. */
  sendCallback: (callSid: string, method: 'POST' | 'GET', url: string, params: Record<string, string>) => void;
}

export function createFakeNumbers(deps: FakeNumbersDeps): FakeNumbers {
  const { accountSid, apiError } = deps;
  const stock = initialStock();
  const incoming = new Map<string, FakeIncomingNumber>();
  const callerIds = new Map<string, { sid: string; phoneNumber: string; friendlyName: string }>();
  const validations: FakeValidation[] = [];
  const scripts: FakeValidationScript[] = [];
  const purchaseScripts: FakePurchaseScript[] = [];
  const releaseScripts: FakeReleaseScript[] = [];
  const searchScripts: FakeSearchScript[] = [];
  let maxPageSize = 1000;
  const timers = new Set<NodeJS.Timeout>();
  const accountUri = `/${API_VERSION}/Accounts/${accountSid}`;

  function route(method: string, rest: string, form: Record<string, string[]>, query: URLSearchParams): Answer | Promise<Answer> | null {
    const available = /^AvailablePhoneNumbers\/([A-Za-z]{2})\/Local\.json$/.exec(rest);
    if (available && method === 'GET') return searchLocal(available[1].toUpperCase(), query);
    if (rest === 'IncomingPhoneNumbers.json' && method === 'POST') return answerPurchase(buy(form));
    const number = /^IncomingPhoneNumbers\/([^/.]+)\.json$/.exec(rest);
    if (number && method === 'DELETE') return release(number[1], rest);
    if (rest === 'OutgoingCallerIds.json' && method === 'POST') return validate(form);
    if (rest === 'OutgoingCallerIds.json' && method === 'GET') return listCallerIds(query);
    const callerId = /^OutgoingCallerIds\/([^/.]+)\.json$/.exec(rest);
    if (callerId && method === 'DELETE') return callerIds.delete(callerId[1]) ? { status: 204, body: null } : notFound(rest);
    if (available || number || callerId || /^(?:IncomingPhoneNumbers|OutgoingCallerIds)\.json$/.test(rest)) return apiError(405, 20004, 'Method not allowed');
    return null;
  }

  const notFound = (rest: string) => apiError(404, 20404, `The requested resource ${accountUri}/${rest} was not found`);

  function searchLocal(country: string, query: URLSearchParams) {
    const s = stock[country];
    if (!s) return notFound(`AvailablePhoneNumbers/${country}/Local.json`);
    const areaCode = query.get('AreaCode');
    const { items: matching, paging } = page(
      s.numbers.filter((n) => !areaCode || n.e164.startsWith(`+1${areaCode}`)),
      query,
      `${accountUri}/AvailablePhoneNumbers/${country}/Local.json`,
    );
    const script = searchScripts.shift();
    if (script?.sellOut) {
      // Sold to another Twilio customer once this answer went out.
      const sold = new Set(matching.slice(0, script.sellOut).map((n) => n.e164));
      s.numbers = s.numbers.filter((n) => !sold.has(n.e164));
    }
    return {
      status: 200,
      body: {
        available_phone_numbers: matching.map((n) => ({
          friendly_name: friendly(n.e164),
          phone_number: n.e164,
          lata: n.e164.startsWith('+1') ? '236' : null,
          rate_center: n.e164.startsWith('+1') ? n.locality.toUpperCase() : null,
          latitude: null,
          longitude: null,
          locality: n.locality,
          region: n.region,
          postal_code: n.postalCode || null,
          iso_country: country,
          address_requirements: s.requires ? 'any' : 'none',
          beta: false,
          // This resource names them SMS and MMS; IncomingPhoneNumbers says sms and mms.
          capabilities: { voice: true, SMS: country !== 'GB', MMS: country === 'US', fax: false },
        })),
        ...paging,
      },
    };
  }

  /**
   * One page of `all` as Twilio pages a list: `PageSize` (default 50, at most `maxPageSize`) and
   * `Page` (from 0; Twilio's next_page_uri also carries a PageToken, which the fake ignores).
   */
  function page<T>(all: T[], query: URLSearchParams, path: string) {
    const pageSize = Math.min(Number(query.get('PageSize') ?? 50) || 50, maxPageSize);
    const pageNo = Math.max(Number(query.get('Page') ?? 0) || 0, 0);
    const start = pageNo * pageSize;
    const items = all.slice(start, start + pageSize);
    const filters = [...query.entries()].filter(([k]) => !['PageSize', 'Page', 'PageToken'].includes(k));
    const uriOf = (n: number) => {
      const q = new URLSearchParams([...filters, ['PageSize', String(pageSize)], ['Page', String(n)]]);
      if (n > 0) q.set('PageToken', `PA${n}`);
      return `${path}?${q.toString()}`;
    };
    const hasNext = start + pageSize < all.length;
    return {
      items,
      paging: {
        end: Math.max(start + items.length - 1, 0),
        first_page_uri: uriOf(0),
        next_page_uri: hasNext ? uriOf(pageNo + 1) : null,
        page: pageNo,
        page_size: pageSize,
        previous_page_uri: pageNo > 0 ? uriOf(pageNo - 1) : null,
        start,
        uri: uriOf(pageNo),
      },
    };
  }

  function buy(form: Record<string, string[]>) {
    const phoneNumber = one(form, 'PhoneNumber');
    if (!phoneNumber || !/^\+[1-9]\d{6,14}$/.test(phoneNumber)) return apiError(400, 21421, 'PhoneNumber is invalid');
    const country = Object.keys(stock).find((c) => stock[c].numbers.some((n) => n.e164 === phoneNumber));
    if (!country) return apiError(400, 21422, `PhoneNumber ${phoneNumber} is not available`);
    const s = stock[country];
    if (s.requires === 'bundle' && !one(form, 'BundleSid')) {
      return apiError(400, 21649, `Phone Number Requires a Bundle: a regulated number of ${country} needs an approved BundleSid`);
    }
    if (s.requires === 'address' && !one(form, 'AddressSid')) return apiError(400, 21631, 'Phone Number Requires an Address');
    s.numbers = s.numbers.filter((n) => n.e164 !== phoneNumber);
    const bought: FakeIncomingNumber = { sid: `PN${randomHex(16)}`, phoneNumber, country, form, releasedAt: null };
    incoming.set(bought.sid, bought);
    return { status: 201, body: incomingResource(bought) };
  }

  /** The purchase's answer, once the next purchase script (if any) let it go. */
  function answerPurchase(answer: Answer): Answer | Promise<Answer> {
    const script = purchaseScripts.shift();
    if (!script?.beforeAnswer) return answer;
    return script.beforeAnswer().then(
      () => answer,
      () => apiError(500, 20500, 'Internal Server Error'),
    );
  }

  /** A released number does not go back on sale (Twilio ages numbers before selling them again). */
  function release(sid: string, rest: string) {
    const n = incoming.get(sid);
    if (!n || n.releasedAt !== null) return notFound(rest);
    const script = releaseScripts.shift();
    if (script?.error) return apiError(script.error.status, script.error.code, script.error.message);
    n.releasedAt = Date.now();
    return { status: 204, body: null };
  }

  function incomingResource(n: FakeIncomingNumber) {
    const now = rfc2822(new Date());
    return {
      account_sid: accountSid,
      address_requirements: stock[n.country].requires ? 'any' : 'none',
      address_sid: one(n.form, 'AddressSid') ?? null,
      api_version: API_VERSION,
      beta: false,
      bundle_sid: one(n.form, 'BundleSid') ?? null,
      capabilities: { voice: true, sms: n.country !== 'GB', mms: n.country === 'US', fax: false },
      date_created: now,
      date_updated: now,
      emergency_status: 'Inactive',
      friendly_name: one(n.form, 'FriendlyName') ?? friendly(n.phoneNumber),
      identity_sid: null,
      origin: 'twilio',
      phone_number: n.phoneNumber,
      sid: n.sid,
      status: 'in-use',
      status_callback: one(n.form, 'StatusCallback') ?? '',
      status_callback_method: one(n.form, 'StatusCallbackMethod') ?? 'POST',
      trunk_sid: null,
      uri: `${accountUri}/IncomingPhoneNumbers/${n.sid}.json`,
      voice_application_sid: null,
      voice_method: 'POST',
      voice_url: one(n.form, 'VoiceUrl') ?? null,
    };
  }

  function validate(form: Record<string, string[]>) {
    const phoneNumber = one(form, 'PhoneNumber');
    if (!phoneNumber || !/^\+[1-9]\d{6,14}$/.test(phoneNumber)) return apiError(400, 21421, 'PhoneNumber is invalid');
    if ([...callerIds.values()].some((c) => c.phoneNumber === phoneNumber)) return apiError(400, 21450, 'Phone number already verified for your account');
    const script = scripts.shift() ?? {};
    const friendlyName = one(form, 'FriendlyName') ?? friendly(phoneNumber);
    const validation: FakeValidation = {
      phoneNumber,
      callSid: `CA${randomHex(16)}`,
      validationCode: String(parseInt(randomHex(4), 16) % 1_000_000).padStart(6, '0'),
      form,
      outcome: script.outcome ?? (phoneNumber.endsWith('9') ? 'failed' : 'success'),
      loseCallback: script.loseCallback ?? false,
    };
    validations.push(validation);
    const answer = {
      status: 201,
      body: { account_sid: accountSid, call_sid: validation.callSid, friendly_name: friendlyName, phone_number: phoneNumber, validation_code: validation.validationCode },
    };
    if (script.answerAfterMs !== undefined) {
      conclude(validation, friendlyName);
      return new Promise<typeof answer>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve(answer);
        }, script.answerAfterMs);
        timers.add(timer);
      });
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      conclude(validation, friendlyName);
    }, script.delayMs ?? VALIDATION_DELAY_MS);
    timers.add(timer);
    return answer;
  }

  /** The verification call ended: on success the caller ID exists, and the callback says so. */
  function conclude(v: FakeValidation, friendlyName: string): void {
    const params: Record<string, string> = {
      AccountSid: accountSid,
      ApiVersion: API_VERSION,
      CallSid: v.callSid,
      CallStatus: 'completed',
      Called: v.phoneNumber,
      Direction: 'outbound-api',
      To: v.phoneNumber,
      VerificationStatus: v.outcome,
    };
    if (v.outcome === 'success') {
      const sid = `PN${randomHex(16)}`;
      callerIds.set(sid, { sid, phoneNumber: v.phoneNumber, friendlyName });
      params.OutgoingCallerIdSid = sid;
    }
    const url = one(v.form, 'StatusCallback');
    if (url && !v.loseCallback) deps.sendCallback(v.callSid, one(v.form, 'StatusCallbackMethod') === 'GET' ? 'GET' : 'POST', url, params);
  }

  function listCallerIds(query: URLSearchParams) {
    const phoneNumber = query.get('PhoneNumber');
    const { items: found, paging } = page(
      [...callerIds.values()].filter((c) => !phoneNumber || c.phoneNumber === phoneNumber),
      query,
      `${accountUri}/OutgoingCallerIds.json`,
    );
    const now = rfc2822(new Date());
    return {
      status: 200,
      body: {
        outgoing_caller_ids: found.map((c) => ({
          account_sid: accountSid,
          date_created: now,
          date_updated: now,
          friendly_name: c.friendlyName,
          phone_number: c.phoneNumber,
          sid: c.sid,
          uri: `${accountUri}/OutgoingCallerIds/${c.sid}.json`,
        })),
        ...paging,
      },
    };
  }

  return {
    incoming,
    callerIds,
    validations,
    nextValidation: (script) => void scripts.push(script),
    nextPurchase: (script) => void purchaseScripts.push(script),
    nextRelease: (script) => void releaseScripts.push(script),
    nextSearch: (script) => void searchScripts.push(script),
    setMaxPageSize: (size) => void (maxPageSize = size),
    route,
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}

function one(form: Record<string, string[]>, name: string): string | undefined {
  return form[name]?.[0];
}

/** Twilio's friendly name: `(202) 555-0100` for NANP numbers, the E.164 elsewhere. */
function friendly(e164: string): string {
  const m = /^\+1(\d{3})(\d{3})(\d{4})$/.exec(e164);
  return m ? `(${m[1]}) ${m[2]}-${m[3]}` : e164;
}

function rfc2822(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000');
}
