import test from 'ava';
import { ScriptedBridge } from '../../telephony/scripted/scripted-bridge.ts';
import type { AgentSetup } from '../../telephony/speech-bridge.ts';

/**
 * The scripted agent (test mode) speaks the customer's calling language after the opening
 * (issue 23 §5: "Today a French customer's test call is English"): what the callee hears from the
 * agent is in en, fr, de, es or nl by the calling language's first part, English otherwise.
 */
async function agentLines(language: string, to: string): Promise<string[]> {
  const lines: string[] = [];
  const setup: AgentSetup = { instructions: '', businessName: 'Boulangerie Éclair', greeting: 'Bonjour', tools: [], language, to, timezone: 'Europe/Paris' };
  let ended!: () => void;
  const done = new Promise<void>((r) => (ended = r));
  const connection = await new ScriptedBridge({ stepDelayMs: 0 }).connect(setup, {
    onAudio: () => {},
    onInterrupted: () => {},
    onToolCall: async (name) => {
      if (name === 'end_call') ended();
      return { ok: true };
    },
    onTranscript: (role, text) => void (role === 'agent' && lines.push(text)),
    onError: () => {},
  });
  connection.takeOver();
  await done;
  connection.close();
  return lines;
}

test('a French call: the agent answers in French after the opening', async (t) => {
  t.deepEqual(await agentLines('fr-FR', '+33145670000'), ['Pas de problème, merci pour votre temps. Au revoir.']);
  t.deepEqual(await agentLines('fr-FR', '+33145670001'), [
    'Pourrions-nous prévoir un appel de 30 minutes le prochain jour ouvré à dix heures ?',
    'C’est noté. Merci, au revoir.',
  ]);
  t.deepEqual(await agentLines('fr-FR', '+33145670005'), ['Entendu, nous ne vous appellerons plus. Au revoir.']);
  t.deepEqual(await agentLines('fr-FR', '+33145670008'), ['Bien sûr, nous vous rappellerons plus tard. Au revoir.']);
});

test('German, Spanish and Dutch calls hear their language; English and unknown languages hear English', async (t) => {
  t.deepEqual(await agentLines('de-DE', '+4930123450'), ['Kein Problem, vielen Dank für Ihre Zeit. Auf Wiederhören.']);
  t.deepEqual(await agentLines('es-ES', '+34911234560'), ['No hay problema, gracias por su tiempo. Adiós.']);
  t.deepEqual(await agentLines('nl-NL', '+31201234560'), ['Geen probleem, bedankt voor uw tijd. Tot ziens.']);
  t.deepEqual(await agentLines('en-GB', '+442071234560'), ['No problem, thank you for your time. Goodbye.']);
  t.deepEqual(await agentLines('it-IT', '+390612345670'), ['No problem, thank you for your time. Goodbye.']);
});
