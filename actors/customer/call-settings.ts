/**
 * A customer's call settings (issue 23): what the agent does at a machine, how it takes turns,
 * how a request is retried, who answers a call back, what happens when the callee objects to
 * the recording, and the voice. The reseller sets any of them (docs/api.md, "Call settings");
 * the rest are the documented defaults. Stored as set (customers.call_settings, migration 038),
 * read through `callSettingsOf`. Pure.
 */

import type { TurnSettings } from '../../telephony/speech-bridge.ts';

/** Voices both the speech-to-speech agent and the speech synthesis of the opening speak in. */
export const VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse', 'marin', 'cedar'] as const;
export type Voice = (typeof VOICES)[number];

export interface CallSettings {
  /** The voice of the opening, the agent and the voicemail message. */
  voice: Voice;
  voicemail: {
    /** At a machine: hang up at once, or leave `message` after the beep. Either way the outcome is `voicemail`. */
    action: 'hang_up' | 'leave_message';
    /**
     * What is left after the beep, in the calling language; null: the default message. The
     * business's registered name and an opt-out number are always added (47 CFR 64.1200(b)(3)).
     */
    message: string | null;
  };
  /** How the agent takes turns (telephony/speech-bridge.ts `TurnSettings`). */
  turn_detection: TurnSettings;
  retries: {
    /** Calls a request may make in all (1: never retried). */
    max_attempts: number;
    /** Least time between two attempts of one request, hours. */
    min_gap_hours: number;
  };
  inbound: {
    /**
     * A call to the customer's number: `forward` to the customer's own phone, `agent` answers with
     * the customer's brief, `message` says whom they reached and offers the opt-out. Null: forward
     * when the customer has a phone, else message.
     */
    action: 'forward' | 'agent' | 'message' | null;
  };
  recording: {
    /** The callee objects to the recording: stop recording and go on, or end the call. */
    on_objection: 'continue_unrecorded' | 'end_call';
  };
}

/** The bounds the API enforces on each number (inclusive). */
export const CALL_SETTING_BOUNDS = {
  turn_detection: {
    silence_ms: { min: 200, max: 2000 },
    threshold: { min: 0.3, max: 0.9 },
    prefix_padding_ms: { min: 100, max: 1000 },
    backchannel_max_ms: { min: 0, max: 1500 },
  },
  retries: {
    max_attempts: { min: 1, max: 5 },
    min_gap_hours: { min: 2, max: 72 },
  },
} as const;

export const DEFAULT_CALL_SETTINGS: CallSettings = {
  voice: 'marin',
  voicemail: { action: 'leave_message', message: null },
  turn_detection: { silence_ms: 500, threshold: 0.5, prefix_padding_ms: 300, backchannel_max_ms: 700 },
  retries: { max_attempts: 3, min_gap_hours: 4 },
  inbound: { action: null },
  recording: { on_objection: 'continue_unrecorded' },
};

type Stored = { [K in keyof CallSettings]?: CallSettings[K] extends object ? Partial<CallSettings[K]> : CallSettings[K] };

/**
 * The settings in force: what was stored over the defaults, group by group. Values are checked
 * when the API stores them; a stored value of the wrong type (never written by this code) is
 * ignored rather than trusted.
 */
export function callSettingsOf(customer: { call_settings?: unknown }): CallSettings {
  const stored = (isRecord(customer.call_settings) ? customer.call_settings : {}) as Stored;
  const group = <K extends Exclude<keyof CallSettings, 'voice'>>(key: K): CallSettings[K] => {
    const defaults = DEFAULT_CALL_SETTINGS[key] as Record<string, unknown>;
    const given = isRecord(stored[key]) ? (stored[key] as Record<string, unknown>) : {};
    const out: Record<string, unknown> = { ...defaults };
    for (const [field, value] of Object.entries(given)) {
      if (!(field in defaults)) continue;
      const want = defaults[field];
      if (value === null || typeof value === typeof want || want === null) out[field] = value;
    }
    return out as CallSettings[K];
  };
  const voice = typeof stored.voice === 'string' && (VOICES as readonly string[]).includes(stored.voice) ? (stored.voice as Voice) : DEFAULT_CALL_SETTINGS.voice;
  return {
    voice,
    voicemail: group('voicemail'),
    turn_detection: group('turn_detection'),
    retries: group('retries'),
    inbound: group('inbound'),
    recording: group('recording'),
  };
}

/** The name said in a call's identification: the registered name, else the customer's name. */
export function registeredNameOf(customer: { registered_name?: string | null; name: string }): string {
  return customer.registered_name?.trim() || customer.name.trim();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
