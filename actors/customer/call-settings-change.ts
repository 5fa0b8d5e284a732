/**
 * A change to a customer's call settings as the API takes it (docs/api.md, "Call settings"): send
 * only what changes. A group merges field by field into what is stored; `null` for a field resets
 * it to its default, `null` for a group resets the whole group, and `call_settings: null` resets
 * everything. Only what the reseller set is stored (customers.call_settings), so a field never set
 * follows the documented default. Bounds and enums are the request schema's
 * (http/schemas/customers.ts, from CALL_SETTING_BOUNDS and VOICES). Pure.
 */

import { DEFAULT_CALL_SETTINGS, callSettingsOf, type CallSettings, type Voice } from './call-settings.ts';
import { Refusal } from '../../runtime/refusal.ts';

type Group = Exclude<keyof CallSettings, 'voice'>;
type GroupPatch<K extends Group> = { [F in keyof CallSettings[K]]?: CallSettings[K][F] | null };

/** What a create or an update may send: any field, `null` to reset. */
export type CallSettingsPatch = {
  voice?: Voice | null;
} & { [K in Group]?: GroupPatch<K> | null };

const GROUPS = Object.keys(DEFAULT_CALL_SETTINGS).filter((k) => k !== 'voice') as Group[];

/** The stored settings after `patch`: what was stored, with the patch merged group by group. */
export function mergeCallSettings(stored: unknown, patch: CallSettingsPatch | null | undefined): Record<string, unknown> {
  if (patch === null) return {};
  const before = isRecord(stored) ? stored : {};
  const out: Record<string, unknown> = {};
  // Only what this code knows is carried over: a key of an older shape is dropped on the next write.
  if (typeof before.voice === 'string') out.voice = before.voice;
  for (const group of GROUPS) if (isRecord(before[group])) out[group] = known(group, before[group]);
  if (patch === undefined) return prune(out);
  if (patch.voice === null) delete out.voice;
  else if (patch.voice !== undefined) out.voice = patch.voice;
  for (const group of GROUPS) {
    const change = patch[group];
    if (change === undefined) continue;
    if (change === null) {
      delete out[group];
      continue;
    }
    const merged = { ...((out[group] as Record<string, unknown>) ?? {}) };
    for (const [field, value] of Object.entries(change)) {
      if (value === undefined) continue;
      if (value === null) delete merged[field];
      else merged[field] = value;
    }
    out[group] = merged;
  }
  return prune(out);
}

/**
 * Why settings in force cannot stand for this customer, or null. Forwarding a call back needs the
 * customer's own phone (there is nowhere else to send it).
 */
export function callSettingsProblem(stored: Record<string, unknown>, customer: { phone: string | null }): 'forward_needs_phone' | null {
  const inForce = callSettingsOf({ call_settings: stored });
  if (inForce.inbound.action === 'forward' && !customer.phone) return 'forward_needs_phone';
  return null;
}

/** Text fields are stored without the spaces around them. */
export function trimmedCallSettingsPatch(patch: CallSettingsPatch | null | undefined): CallSettingsPatch | null | undefined {
  if (!patch?.voicemail || typeof patch.voicemail.message !== 'string') return patch;
  return { ...patch, voicemail: { ...patch.voicemail, message: patch.voicemail.message.trim() } };
}

/** A control character (line break, tab…) or a line or paragraph separator: a name is said on one line. */
const NOT_ONE_LINE = /[\p{Cc}\u2028\u2029]/u;
/** A letter or a digit of any script: something the identification can say. */
const SAYABLE = /[\p{L}\p{N}]/u;

/** The registered name to store: trimmed, null clears, undefined leaves alone; more than one line is refused. */
export function registeredNameInput(value: string | null | undefined): string | null | undefined {
  if (typeof value !== 'string') return value;
  if (NOT_ONE_LINE.test(value)) throw new Refusal('invalid_parameter', 'registered_name must be one line of text, without line breaks, tabs or other control characters.');
  // Said in every call's identification (47 CFR 64.1200(b)(1)): a name of only invisible
  // characters (zero-width spaces pass the schema's \S) or punctuation would identify nobody.
  if (!SAYABLE.test(value)) throw new Refusal('invalid_parameter', 'registered_name must contain a letter or a digit: it is the name said in each call’s identification.');
  return value.trim();
}

/** The registered address to store (PECR reg. 24): trimmed, null clears, undefined leaves alone; one line, something sayable. */
export function registeredAddressInput(value: string | null | undefined): string | null | undefined {
  if (typeof value !== 'string') return value;
  if (NOT_ONE_LINE.test(value)) throw new Refusal('invalid_parameter', 'registered_address must be one line of text, without line breaks, tabs or other control characters.');
  // Said in the opening of a call to a UK number (PECR reg. 24(1)(b)): it must say something.
  if (!SAYABLE.test(value)) throw new Refusal('invalid_parameter', 'registered_address must contain a letter or a digit: it is the address said in the opening of a call to a UK number.');
  return value.trim();
}

function known(group: Group, given: Record<string, unknown>): Record<string, unknown> {
  const fields = DEFAULT_CALL_SETTINGS[group] as Record<string, unknown>;
  return Object.fromEntries(Object.entries(given).filter(([field, value]) => field in fields && value !== null && value !== undefined));
}

function prune(settings: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(settings)) if (isRecord(value) && Object.keys(value).length === 0) delete settings[key];
  return settings;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
