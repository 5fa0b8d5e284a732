import test from 'ava';
import { FailureThrottle, FAILURE_WINDOW_MS, throttleKey } from '../../http/plugins/auth-throttle.ts';

test('an address may fail `limit` times in a window; then it waits for the window to end', (t) => {
  let now = 5_000_000;
  const throttle = new FailureThrottle(3, () => now);
  for (let i = 0; i < 3; i++) {
    t.is(throttle.retryAfterSeconds('203.0.113.1'), 0, `attempt ${i + 1}`);
    throttle.fail('203.0.113.1');
  }
  t.is(throttle.retryAfterSeconds('203.0.113.1'), FAILURE_WINDOW_MS / 1000);
  now += 45_500;
  t.is(throttle.retryAfterSeconds('203.0.113.1'), 15, 'rounded up to a whole second');
  now += 14_499;
  t.is(throttle.retryAfterSeconds('203.0.113.1'), 1, 'never 0 while refused');
  now += 1;
  t.is(throttle.retryAfterSeconds('203.0.113.1'), 0, 'a new window');
  throttle.fail('203.0.113.1');
  t.is(throttle.retryAfterSeconds('203.0.113.1'), 0, 'counted from zero again');
});

test('addresses are counted apart', (t) => {
  const throttle = new FailureThrottle(1, () => 0);
  throttle.fail('203.0.113.1');
  t.true(throttle.retryAfterSeconds('203.0.113.1') > 0);
  t.is(throttle.retryAfterSeconds('203.0.113.2'), 0);
});

test('an IPv6 client is counted by its /64; an IPv4-mapped address as the IPv4 address', (t) => {
  t.is(throttleKey('2001:db8:1:2:3:4:5:6'), throttleKey('2001:db8:1:2:ffff::1'));
  t.not(throttleKey('2001:db8:1:2::1'), throttleKey('2001:db8:1:3::1'));
  t.is(throttleKey('::ffff:203.0.113.5'), '203.0.113.5');
  t.is(throttleKey('203.0.113.5'), '203.0.113.5');
});
