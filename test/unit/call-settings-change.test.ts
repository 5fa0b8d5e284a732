import test from 'ava';
import { callSettingsProblem, mergeCallSettings, registeredAddressInput, registeredNameInput } from '../../actors/customer/call-settings-change.ts';
import { Refusal } from '../../runtime/refusal.ts';

test('a patch merges field by field into what was stored; only what was set is kept', (t) => {
  const stored = { voice: 'sage', turn_detection: { silence_ms: 900 }, retries: { max_attempts: 2 } };
  t.deepEqual(mergeCallSettings(stored, { turn_detection: { threshold: 0.7 } }), { voice: 'sage', turn_detection: { silence_ms: 900, threshold: 0.7 }, retries: { max_attempts: 2 } });
  t.deepEqual(stored, { voice: 'sage', turn_detection: { silence_ms: 900 }, retries: { max_attempts: 2 } }, 'the stored object is not changed');
  t.deepEqual(mergeCallSettings({}, undefined), {});
});

test('null removes a field, a group (an emptied group is dropped) or everything', (t) => {
  const stored = { voice: 'sage', voicemail: { action: 'hang_up', message: 'Hi' }, retries: { max_attempts: 2 } };
  t.deepEqual(mergeCallSettings(stored, { voice: null, voicemail: { message: null } }), { voicemail: { action: 'hang_up' }, retries: { max_attempts: 2 } });
  t.deepEqual(mergeCallSettings(stored, { retries: { max_attempts: null } }), { voice: 'sage', voicemail: { action: 'hang_up', message: 'Hi' } });
  t.deepEqual(mergeCallSettings(stored, { voicemail: null }), { voice: 'sage', retries: { max_attempts: 2 } });
  t.deepEqual(mergeCallSettings(stored, null), {});
});

test('keys this code does not know, and stored nulls, are dropped on the next write', (t) => {
  t.deepEqual(mergeCallSettings({ old: 1, retries: { max_attempts: 2, spacing: 'x', min_gap_hours: null } }, {}), { retries: { max_attempts: 2 } });
  t.deepEqual(mergeCallSettings('not an object', { voice: 'ash' }), { voice: 'ash' });
});

test('forward needs a phone: in force after the merge, whoever set it', (t) => {
  t.is(callSettingsProblem({ inbound: { action: 'forward' } }, { phone: null }), 'forward_needs_phone');
  t.is(callSettingsProblem({ inbound: { action: 'forward' } }, { phone: '+441134960000' }), null);
  t.is(callSettingsProblem({ inbound: { action: 'agent' } }, { phone: null }), null);
  t.is(callSettingsProblem({}, { phone: null }), null, 'the default (null) forwards only when there is a phone');
});

test('a registered name with nothing to say (zero-width or invisible characters only) is refused: the identification would name nobody', (t) => {
  for (const bad of ['\u200b', '\u200b\u200c\u200d', '\ufeff', '\u2060\u200b', '--', '...']) {
    const err = t.throws(() => registeredNameInput(bad));
    t.true(err instanceof Refusal && err.code === 'invalid_parameter', JSON.stringify(bad));
  }
  // Names in any script, and with a zero-width non-joiner inside (Persian), stay accepted.
  for (const good of ['Bright LLC', 'شرکت\u200cپارس', 'Société Générale', '3M', '株式会社']) t.is(registeredNameInput(good), good);
});

test('the registered name is stored trimmed, on one line', (t) => {
  t.is(registeredNameInput('  Bright LLC '), 'Bright LLC');
  t.is(registeredNameInput(null), null);
  t.is(registeredNameInput(undefined), undefined);
  for (const bad of ['Two\nlines', 'Tab\there', 'Sep\u2028arator']) {
    const err = t.throws(() => registeredNameInput(bad));
    t.true(err instanceof Refusal && err.code === 'invalid_parameter', bad);
  }
});

test('the registered address (PECR reg. 24) is stored trimmed, on one line, and must say something', (t) => {
  t.is(registeredAddressInput('  1 High Street, Leeds LS1 1AA '), '1 High Street, Leeds LS1 1AA');
  t.is(registeredAddressInput(null), null);
  t.is(registeredAddressInput(undefined), undefined);
  for (const bad of ['1 High Street\nLeeds', 'Tab\there', '\u200b', '--']) {
    const err = t.throws(() => registeredAddressInput(bad));
    t.true(err instanceof Refusal && err.code === 'invalid_parameter' && /registered_address/.test(err.message), JSON.stringify(bad));
  }
});
