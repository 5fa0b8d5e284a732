import test from 'ava';
import { playPrepared } from '../../actors/call/call-media.ts';
import { newCallLine, type CallState } from '../../actors/call/call-state.ts';
import type { MediaSession } from '../../telephony/media.ts';

/** A media session that records what is sent to the carrier. */
function session(sent: string[]): MediaSession {
  return {
    streamSid: 'MZ1',
    callId: 'call-1',
    streamToken: null,
    sendAudio: () => void sent.push('audio'),
    sendMark: (n) => void sent.push(`mark:${n}`),
    clear: () => void sent.push('clear'),
    close: () => {},
    onAudio: () => {},
    onMark: () => {},
    onDtmf: () => {},
    onStop: () => {},
  };
}

test('prepared audio (the voicemail message) is never played after the callee pressed 9, even when it was prepared while the 9 came', async (t) => {
  const sent: string[] = [];
  const line = newCallLine({ instructions: '', businessName: 'Bright', greeting: 'Hello.', tools: [], language: 'en-US', to: '+12125550100', timezone: 'UTC' } as any, {
    language: 'en',
    jurisdiction: { country: 'US', region: 'NY' },
    segments: [],
    text: 'Hello.',
    rules: [],
    sha256: '0'.repeat(64),
  });
  line.media = session(sent);
  line.optedOut = true; // call-media.ts silence(): the 9 was pressed while the message was synthesized
  const state = { id: 'call-1', line } as unknown as CallState;
  await playPrepared(state, ['AAAA', 'AAAA'], 'voicemail_message_end');
  t.deepEqual(sent, [], 'nothing more is said');
  t.is(line.markWaiters.size, 0);
});
