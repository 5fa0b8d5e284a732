import test from 'ava';
import { composeOpening, isUkFreephone, OpeningNotLawful, pecrReg24Rule, OPT_OUT_DIGIT, OPT_OUT_WITHIN_MS, PURPOSE_EARLY_US_STATES, calledJurisdictionOf } from '../../actors/call/opening.ts';
import { OPENING_WORDS, OPENING_LANGUAGES } from '../../actors/call/opening-words.ts';
import { DeterministicSynthesizer } from '../../telephony/speech-synthesis/synthesizer.ts';
import { SAMPLE_RATE_HZ } from '../../telephony/mulaw.ts';
import { namesSupplier } from '../../actors/shared/output-filter.ts';
import { agentSetup } from '../../actors/call/agent-setup.ts';

/** The opening's words per jurisdiction and language (issue 23 §1; docs/compliance.md "The opening"). */

const base = { registeredName: 'Bright Dental LLC', callbackNumber: '+12025550188', language: 'en-US' };
const kinds = (o: ReturnType<typeof composeOpening>) => o.segments.map((s) => s.kind);

test('the opening in order: identification with the registered name, the opt-out offer (press 9 or say stop), the notice, a number, the question', (t) => {
  const o = composeOpening({ ...base, to: '+12125550100' }); // New York: no early purpose
  t.deepEqual(kinds(o), ['identification', 'opt_out', 'notice', 'callback', 'question']);
  t.is(o.text, 'Hello, this call is on behalf of Bright Dental LLC. To stop these calls, press 9 or say stop. I am an automated assistant, and this call is recorded. You can reach Bright Dental LLC at (202) 555-0188. Do you have a moment?');
  t.is(OPT_OUT_DIGIT, '9');
  t.false(namesSupplier(o.text));
});

test('the purpose comes early for WA, UT, TX, CT and NV (by the called area code) and Canada; not for New York or the UK', (t) => {
  t.deepEqual([...PURPOSE_EARLY_US_STATES], ['WA', 'UT', 'TX', 'CT', 'NV']);
  const byState: [string, string][] = [['WA', '+12065550100'], ['UT', '+18015550100'], ['TX', '+12145550100'], ['CT', '+12035550100'], ['NV', '+17025550100']];
  for (const [state, to] of byState) {
    t.is(calledJurisdictionOf(to).region, state);
    const o = composeOpening({ ...base, to });
    t.deepEqual(kinds(o), ['identification', 'opt_out', 'purpose', 'notice', 'callback', 'question'], state);
    t.is(o.segments[2]!.text, 'We are calling to offer a short meeting about the services of Bright Dental LLC.');
    t.true(o.rules.includes(`us_${state.toLowerCase()}_purpose_early`));
  }
  const toronto = composeOpening({ ...base, to: '+14165550100' });
  t.deepEqual(calledJurisdictionOf('+14165550100'), { country: 'CA', region: 'ON' });
  t.true(kinds(toronto).includes('purpose') && toronto.rules.includes('ca_crtc_purpose_early'));
  t.false(kinds(composeOpening({ ...base, to: '+12125550100' })).includes('purpose'), 'NY');
  const london = composeOpening({ ...base, callbackNumber: '+442079460958', to: '+442079460000', language: 'en-GB', registeredAddress: '1 High Street, Leeds LS1 1AA' });
  t.false(kinds(london).includes('purpose'));
});

test('PECR reg. 24: a UK opening with a geographic caller ID says the business address, not the caller ID', (t) => {
  const uk = { ...base, callbackNumber: '+442079460958', to: '+447700900123', language: 'en-GB' };
  const o = composeOpening({ ...uk, registeredAddress: '  1 High Street, Leeds LS1 1AA ' });
  t.deepEqual(kinds(o), ['identification', 'opt_out', 'notice', 'address', 'question']);
  t.is(o.segments[3]!.text, 'Our address is 1 High Street, Leeds LS1 1AA.');
  t.true(o.rules.includes('gb_pecr_reg24_address'));
  t.false(o.rules.includes('gb_pecr_reg24_freephone'));
  t.false(o.rules.some((r) => r === 'gb_pecr_reg24_caller_id_not_freephone'), 'the old gap rule is gone');
  t.notRegex(o.text, /You can reach/);
  // In the calling language.
  t.is(composeOpening({ ...uk, language: 'fr-FR', registeredAddress: '1 High Street, Leeds' }).segments[3]!.text, 'Notre adresse est 1 High Street, Leeds.');
});

test('PECR reg. 24: a UK freephone caller ID (+44 80x, +44 500, +44 808) satisfies it by itself and keeps the callback segment', (t) => {
  t.true(isUkFreephone('+44500123456'), '0500: withdrawn by Ofcom in 2017, still free where it lingers');
  for (const freephone of ['+448001234567', '+448081570000', '+44800123456']) {
    t.true(isUkFreephone(freephone), freephone);
    for (const registeredAddress of [null, '1 High Street, Leeds']) {
      const o = composeOpening({ ...base, callbackNumber: freephone, to: '+447700900123', language: 'en-GB', registeredAddress });
      t.deepEqual(kinds(o), ['identification', 'opt_out', 'notice', 'callback', 'question'], freephone);
      t.true(o.rules.includes('gb_pecr_reg24_freephone'));
      t.false(o.rules.includes('gb_pecr_reg24_address'));
      t.regex(o.text, /You can reach Bright Dental LLC at 080[08] /);
    }
  }
  for (const notFree of ['+442079460958', '+447700900123', '+448712345678', '+448451234567', '+18005550100', null]) t.false(isUkFreephone(notFree), String(notFree));
});

test('PECR reg. 24: a UK number with neither an address nor a freephone caller ID has no opening (the call is not made)', (t) => {
  for (const registeredAddress of [null, undefined, '   ']) {
    for (const callbackNumber of ['+442079460958', null]) {
      const err = t.throws(() => composeOpening({ ...base, callbackNumber, to: '+447700900123', language: 'en-GB', registeredAddress }), { instanceOf: OpeningNotLawful });
      t.is(err!.code, 'registered_address_required');
    }
  }
  t.is(pecrReg24Rule({ callerId: '+442079460958', registeredAddress: null }), null);
  // Outside the UK nothing changes: the caller ID is said, no address wanted.
  t.deepEqual(kinds(composeOpening({ ...base, to: '+12125550100' })), ['identification', 'opt_out', 'notice', 'callback', 'question']);
});

test('without a caller ID no number is said, the opt-out still is, and the record says why', (t) => {
  const o = composeOpening({ ...base, callbackNumber: null, to: '+12125550100' });
  t.deepEqual(kinds(o), ['identification', 'opt_out', 'notice', 'question']);
  t.true(o.rules.includes('callback_number_unknown'));
});

test('the opening in the calling language: French, German, Spanish, Dutch; any other language is English', (t) => {
  const fr = composeOpening({ ...base, to: '+33145670000', calledCountry: 'FR', language: 'fr-FR', callbackNumber: '+33145670188' });
  t.is(fr.language, 'fr');
  t.is(fr.segments[0]!.text, 'Bonjour, cet appel est passé au nom de Bright Dental LLC.');
  t.is(fr.segments[1]!.text, 'Pour ne plus recevoir ces appels, appuyez sur 9 ou dites stop.');
  t.regex(composeOpening({ ...base, to: '+4930123456', language: 'de-DE' }).segments[1]!.text, /drücken Sie die 9 oder sagen Sie Stopp/);
  t.regex(composeOpening({ ...base, to: '+34911234567', language: 'es-ES' }).segments[1]!.text, /pulse 9 o diga basta/);
  t.regex(composeOpening({ ...base, to: '+31201234567', language: 'nl-NL' }).segments[1]!.text, /druk op 9 of zeg stop/);
  t.is(composeOpening({ ...base, to: '+4930123456', language: 'ja-JP' }).language, 'en');
  for (const language of OPENING_LANGUAGES) {
    const words = OPENING_WORDS[language];
    t.true(words.optOut.includes('9'), language);
    t.true(words.identification('Bright Dental LLC').includes('Bright Dental LLC'), language);
    t.false(namesSupplier(Object.values(words).map((w) => (typeof w === 'function' ? w('X', '1') : w)).join(' ')), language);
  }
  // Quebec's callee hears French when the calling language says so, with the early purpose Canada wants.
  const quebec = composeOpening({ ...base, to: '+15145550100', language: 'fr-CA' });
  t.is(quebec.segments[2]!.text, 'Nous vous appelons pour vous proposer un court rendez-vous au sujet des services de Bright Dental LLC.');
});

/** When the audio of `segment` has its last (or first) sound, ms from its start (deterministic voice: silence is 0xFF). */
function soundEdges(audio: Buffer): { firstMs: number; lastMs: number } {
  let first = -1;
  let last = -1;
  for (let i = 0; i < audio.length; i++) {
    if (audio[i] !== 0xff) {
      if (first < 0) first = i;
      last = i;
    }
  }
  return { firstMs: (first * 1000) / SAMPLE_RATE_HZ, lastMs: ((last + 1) * 1000) / SAMPLE_RATE_HZ };
}

test('the opt-out offer starts within two seconds of the identification’s last word (deterministic voice), a long registered name too', async (t) => {
  t.is(OPT_OUT_WITHIN_MS, 2_000);
  const voice = new DeterministicSynthesizer();
  for (const registeredName of ['Bright Dental LLC', 'The Very Long Registered Name of a Family Dental Practice and Orthodontics Partnership of Greater Springfield LLC']) {
    const o = composeOpening({ ...base, registeredName, to: '+12125550100' });
    const [identification, optOut] = await Promise.all(o.segments.slice(0, 2).map((s) => voice.synthesize({ text: s.text, language: 'en-US', voice: 'marin' })));
    const id = soundEdges(identification!);
    const offer = soundEdges(optOut!);
    // Segments play back to back: the offer starts where the identification's audio ends.
    const gapMs = identification!.length / (SAMPLE_RATE_HZ / 1000) - id.lastMs + offer.firstMs;
    t.true(gapMs >= 0 && gapMs <= OPT_OUT_WITHIN_MS, `${gapMs} ms`);
    t.true(gapMs < 200, `the offer follows at once (${gapMs} ms)`);
  }
});

test('the agent is told to speak the calling language and the opening it continues from, in that language', (t) => {
  const fr = composeOpening({ ...base, to: '+33145670000', language: 'fr-FR', callbackNumber: '+33145670188' });
  const setup = agentSetup({ businessName: 'Boulangerie Éclair', opening: fr.text, website: null, calledBusiness: null, language: 'fr-FR', timezone: 'Europe/Paris', to: '+33145670000', voice: 'coral' });
  t.regex(setup.instructions, /^Speak French \(fr-FR\) for the whole call/);
  t.true(setup.instructions.includes(`played to the person in French: "${fr.text}"`));
  t.is(setup.greeting, fr.text);
  t.is(setup.voice, 'coral');
});
