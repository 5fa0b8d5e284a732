/**
 * Driving the OpenAI Realtime bridge in tests: an agent setup, handlers that record everything
 * the bridge reports (with the audio each interruption cut off), and waits on them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../runtime/logger.ts';
import type { MarkingBridgeHandlers } from '../../telephony/openai-realtime/openai-realtime-bridge.ts';
import type { AgentSetup, ToolSpec } from '../../telephony/speech-bridge.ts';

export const quiet = createLogger('silent');

export const TOOLS: ToolSpec[] = [
  { name: 'book_appointment', description: 'Books an appointment', parameters: { type: 'object', properties: { start_at: { type: 'string' } }, required: ['start_at'] } },
  { name: 'end_call', description: 'Hangs up', parameters: { type: 'object', properties: { reason: { type: 'string' } } } },
];

export const OPENING = 'Hello, this is Example Dental Ltd. To stop these calls, press 9 or say stop. This call is recorded.';

export const agentSetupFor = (overrides: Partial<AgentSetup> = {}): AgentSetup => ({
  instructions: 'You call on behalf of Example Dental.',
  businessName: 'Example Dental',
  greeting: OPENING,
  tools: TOOLS,
  language: 'en-GB',
  to: '+447700900001',
  timezone: 'Europe/London',
  ...overrides,
});

/** Handlers that record everything; tool results come from `toolResult`. */
export function recorder(toolResult: (name: string, args: Record<string, unknown>) => Promise<unknown> = async () => ({ ok: true })) {
  const rec = {
    audio: [] as string[],
    marks: [] as string[],
    /** How many audio payloads had been relayed at each interruption. */
    interruptedAt: [] as number[],
    tools: [] as { name: string; args: Record<string, unknown> }[],
    transcripts: [] as { role: string; text: string }[],
    errors: [] as Error[],
  };
  const listeners: (() => void)[] = [];
  const changed = () => listeners.splice(0).forEach((l) => l());
  const handlers: MarkingBridgeHandlers = {
    onAudio: (p) => (rec.audio.push(p), changed()),
    onMark: (n) => (rec.marks.push(n), changed()),
    onInterrupted: () => (rec.interruptedAt.push(rec.audio.length), changed()),
    onToolCall: async (name, args) => {
      rec.tools.push({ name, args });
      changed();
      return toolResult(name, args);
    },
    onTranscript: (role, text) => (rec.transcripts.push({ role, text }), changed()),
    onError: (e) => (rec.errors.push(e), changed()),
  };
  /** Resolves once `cond()` holds, re-checked on every handler call. */
  async function until(cond: () => boolean, timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error('condition not reached in time');
      await Promise.race([new Promise<void>((r) => listeners.push(r)), sleep(20)]);
    }
  }
  return { rec, handlers, until };
}

/** Polls `cond` until it holds (for effects with no handler to hook). */
export async function eventually(cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(5);
  }
}

/** The bytes of base64 payloads, joined. */
export const bytesOf = (payloads: string[]) => Buffer.concat(payloads.map((p) => Buffer.from(p, 'base64')));
