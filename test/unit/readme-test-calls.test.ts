import test from 'ava';
import { readFileSync } from 'node:fs';

/**
 * The README promised test calls "in well under a second" while a test call waits for the called
 * number's real calling window (issue 20 §4: a US number queued at 09:41 UTC waited until 13:00).
 * Where it promises speed it says so, and what a reseller can do about it.
 */
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const paragraphs = readme.split(/\n\s*\n/).map((p) => p.replace(/\s+/g, ' '));

test('every paragraph that promises fast test calls says they wait for the calling window, and what to do', (t) => {
  const promises = paragraphs.filter((p) => /under a second|instantly/i.test(p) && /test (mode|call)/i.test(p));
  t.true(promises.length > 0, 'the README says how fast test calls play');
  for (const p of promises) {
    t.regex(p, /calling window/i, p);
    t.regex(p, /outside_calling_window/, p);
    t.regex(p, /SWITCHBOARD_TEST_CLOCK=1/, p);
    t.regex(p, /advance-clock/, p);
    t.regex(p, /window is open/i, p);
  }
});
