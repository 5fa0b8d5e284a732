import test from 'ava';
import { parseMediaFrame, parseTwilioJson, parseTwilioMessage, readTwilioMediaShape } from '../../telephony/media-server.ts';

/**
 * The media server reads a carrier's `media` frames without JSON.parse (parseMediaFrame); every
 * answer it gives must be the answer of the JSON path (parseTwilioJson), and anything it is not
 * sure of must be left to that path.
 */

const PAYLOAD = Buffer.alloc(160, 0xff).toString('base64');
/** A media frame as Twilio Media Streams sends it. */
const TWILIO_FRAME = `{"event":"media","sequenceNumber":"3","media":{"track":"inbound","chunk":"1","timestamp":"5","payload":"${PAYLOAD}"},"streamSid":"MZ18ad3ab5a668481ce02b83e7395059f0"}`;

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let r = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/** `text` with 1 to `most` random edits: one of `pieces` inserted or put in place of a character, or a character removed. */
function damage(text: string, random: () => number, pieces: string[], most: number): string {
  for (let k = 1 + Math.floor(random() * most); k > 0; k--) {
    const at = Math.floor(random() * (text.length + 1));
    const piece = pieces[Math.floor(random() * pieces.length)];
    const op = random();
    if (op < 0.4) text = text.slice(0, at) + piece + text.slice(at);
    else if (op < 0.7) text = text.slice(0, at) + text.slice(at + 1);
    else text = text.slice(0, at) + piece + text.slice(at + 1);
  }
  return text;
}

test('a Twilio media frame is read without JSON.parse, with the JSON path\'s answer', (t) => {
  const fast = parseMediaFrame(TWILIO_FRAME);
  t.deepEqual(fast, { ok: true, message: { event: 'media', payload: PAYLOAD, timestampMs: 5 } });
  t.deepEqual(fast, parseTwilioJson(TWILIO_FRAME));
  t.deepEqual(parseTwilioMessage(TWILIO_FRAME), fast);
  // Other orders of the same members, and other members beside them, are the same frame.
  const reordered = `{"streamSid":"MZ1","media":{"payload":"${PAYLOAD}","timestamp":"20","track":"outbound"},"extra":{},"event":"media"}`;
  t.deepEqual(parseMediaFrame(reordered), { ok: true, message: { event: 'media', payload: PAYLOAD, timestampMs: 20 } });
});

test('what the fast reading is not sure of is left to JSON.parse, which gives the same answer as before', (t) => {
  const cases = [
    `{"event":"media","media":{"timestamp":"5","payload":"a\\/b"}}`, // an escape: JSON.parse unescapes it
    `{"event":"media","media":{"timestamp":"5","payload":"\\u0041"}}`,
    `{"event":"media", "media":{"timestamp":"5","payload":"AA=="}}`, // whitespace
    `{"event":"media","media":{"timestamp":5,"payload":"AA=="}}`, // a number
    `{"event":"media","media":{"timestamp":"","payload":"AA=="}}`, // Number("") is 0
    `{"event":"media","media":{"timestamp":"x","payload":"AA=="}}`,
    `{"event":"media","media":{"payload":"AA=="}}`,
    `{"event":"media","media":{"timestamp":"5"}}`,
    `{"event":"media","media":{"timestamp":"5","payload":"AA==","payload":"BB=="}}`, // the last one wins
    `{"event":"media","media":{"timestamp":"5","payload":"AA=="},"media":{"timestamp":"6"}}`,
    `{"event":"stop","event":"media","media":{"timestamp":"5","payload":"AA=="}}`,
    `{"event":"media","media":"x"}`,
    `{"event":{"a":"b"},"media":{"timestamp":"5","payload":"AA=="}}`,
    `{"event":"media","media":{"timestamp":"5","payload":"AA==","x":{"deeper":"y"}}}`,
    `{"event":"media","media":{"timestamp":"5","payload":"AA=="},"list":["a"]}`,
    `{"event":"media","media":{"timestamp":"5","payload":"AA=="}}x`,
    `{"event":"media","media":{"timestamp":"5","payload":"AA=="}`,
    `{"event":"media","media":{"timestamp":"5","payload":"A\u0001A=="}}`, // a raw control character: not JSON
    `{"event":"media","media":{"timestamp":"5","payload":"AA=="},"note":"tab\there"}`,
    `{"__proto__":{"timestamp":"5","payload":"AA=="},"event":"media"}`,
    `{"event":"media","media":{}}`,
    `{}`,
    `{"event":"mark","mark":{"name":"m1"}}`,
    `{"event":"media","media":{"timestamp":"1e3","payload":"AA=="}}`,
    `{"event":"media","media":{"timestamp":"5","payload":"ü€"}}`,
  ];
  for (const text of cases) {
    const fast = parseMediaFrame(text);
    if (fast) t.deepEqual(fast, parseTwilioJson(text), text);
    t.deepEqual(parseTwilioMessage(text), parseTwilioJson(text), text);
  }
  // The ones the fast reading must not take: escapes, whitespace, numbers, repeated keys, a broken text.
  for (const i of [0, 1, 2, 3, 8, 9, 10, 15, 16, 17]) t.is(parseMediaFrame(cases[i]), null, cases[i]);
  t.deepEqual(parseMediaFrame(cases[4]), { ok: true, message: { event: 'media', payload: 'AA==', timestampMs: 0 } });
  t.deepEqual(parseTwilioMessage(cases[8]), { ok: true, message: { event: 'media', payload: 'BB==', timestampMs: 5 } });
  t.deepEqual(parseTwilioMessage(cases[17]), { ok: false, reason: 'not JSON' });
});

test('random damage to a media frame never makes the fast reading disagree with JSON.parse', (t) => {
  const random = seededRandom(25);
  const small = `{"event":"media","sequenceNumber":"3","media":{"track":"inbound","timestamp":"5","payload":"AAEC"},"streamSid":"MZ1"}`;
  const pieces = ['"', '{', '}', ':', ',', ' ', '\\', '[', ']', '0', '"media"', '"payload"', '"timestamp"', '"event"', '"x"', '\u0001', 'é'];
  let taken = 0;
  for (let n = 0; n < 20_000; n++) {
    const text = damage(random() < 0.5 ? small : TWILIO_FRAME, random, pieces, 3);
    const fast = parseMediaFrame(text);
    if (fast) {
      taken++;
      const reference = parseTwilioJson(text);
      if (JSON.stringify(fast) !== JSON.stringify(reference)) {
        t.fail(`disagree on ${text}: ${JSON.stringify(fast)} vs ${JSON.stringify(reference)}`);
        return;
      }
    }
  }
  t.true(taken > 100, `the fast reading took ${taken} of the damaged frames`);
});

test('a frame in Twilio\'s exact shape is read by one regular expression, with the JSON path\'s answer; any other text is left to the scan', (t) => {
  t.deepEqual(readTwilioMediaShape(TWILIO_FRAME), { ok: true, message: { event: 'media', payload: PAYLOAD, timestampMs: 5 } });
  // Not a finite timestamp: no answer (the JSON path gives its reason), as the scan leaves it.
  const badTime = TWILIO_FRAME.replace('"timestamp":"5"', '"timestamp":"x"');
  t.is(readTwilioMediaShape(badTime), null);
  t.deepEqual(parseTwilioMessage(badTime), { ok: false, reason: 'media without timestamp' });
  // Another order, an escape, a control character, whitespace, another event: not the shape.
  for (const other of [
    `{"streamSid":"MZ1","event":"media","sequenceNumber":"3","media":{"track":"inbound","chunk":"1","timestamp":"5","payload":"AA=="}}`,
    TWILIO_FRAME.replace('inbound', 'in\\bound'),
    TWILIO_FRAME.replace('inbound', 'in\u0001bound'),
    TWILIO_FRAME.replace('"chunk":', '"chunk": '),
    TWILIO_FRAME.replace('"event":"media"', '"event":"mark"'),
  ]) {
    t.is(readTwilioMediaShape(other), undefined, other);
    t.deepEqual(parseTwilioMessage(other), parseTwilioJson(other), other);
  }
  // Damaged Twilio frames: whatever the shape reads is the JSON path's answer.
  const random = seededRandom(33);
  const pieces = ['"', '{', '}', ':', ',', ' ', '\\', '0', 'x', '\u0001', '\u001f', 'é', '\ud800'];
  let shaped = 0;
  for (let n = 0; n < 20_000; n++) {
    const text = damage(TWILIO_FRAME, random, pieces, 2);
    const read = readTwilioMediaShape(text);
    if (read === undefined) continue;
    shaped++;
    const reference = parseTwilioJson(text);
    if (read === null ? reference.ok : JSON.stringify(read) !== JSON.stringify(reference)) {
      t.fail(`disagree on ${text}: ${JSON.stringify(read)} vs ${JSON.stringify(reference)}`);
      return;
    }
    if (JSON.stringify(parseTwilioMessage(text)) !== JSON.stringify(reference)) {
      t.fail(`parseTwilioMessage disagrees on ${text}`);
      return;
    }
  }
  t.true(shaped > 1000, `the shape read ${shaped} of the damaged frames`);
});
