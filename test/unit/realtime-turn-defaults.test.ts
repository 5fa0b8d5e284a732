/**
 * The OpenAI Realtime bridge's turn-taking when a setup gives none (telephony may not import
 * actors/, so the bridge keeps its own copy) is the customer default documented in
 * actors/customer/call-settings.ts.
 */
import test from 'ava';
import { DEFAULT_CALL_SETTINGS } from '../../actors/customer/call-settings.ts';
import { DEFAULT_TURN } from '../../telephony/openai-realtime/openai-realtime-bridge.ts';

test('the bridge’s DEFAULT_TURN is DEFAULT_CALL_SETTINGS.turn_detection, field for field', (t) => {
  t.deepEqual({ ...DEFAULT_TURN }, { ...DEFAULT_CALL_SETTINGS.turn_detection });
  t.deepEqual(DEFAULT_TURN, { silence_ms: 500, threshold: 0.5, prefix_padding_ms: 300, backchannel_max_ms: 700 });
});
