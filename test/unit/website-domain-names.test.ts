import test from 'ava';
import { domainRefusal, isApex, normaliseDomain } from '../../actors/websites/domain-names.ts';

const refusal = (text: string, mode: 'live' | 'test') => {
  const name = normaliseDomain(text);
  return name === null ? 'invalid_domain' : (domainRefusal(name, mode)?.code ?? null);
};

test('live sites: special-use, reserved and IP names are refused (RFC 6761 and after)', (t) => {
  for (const name of ['foo.localhost', 'localhost', 'shop.local', 'www.bright.test', 'www.bright.example', 'www.bright.invalid', 'printer.internal', 'x.onion', 'router.home.arpa', 'www.example.com', 'shop.example.net', 'www.example.org', 'x.alt', '127.0.0.1', '10.0.0.1', '[::1]', '::1', '1.2.3.4.']) {
    t.is(refusal(name, 'live'), 'invalid_domain', name);
  }
});

test('an apex cannot carry a CNAME: refused; a name under it is taken', (t) => {
  for (const name of ['brightdental.com', 'brightdental.co.uk', 'brightdental.com.au', 'bright.de']) {
    t.true(isApex(name), name);
    t.is(refusal(name, 'live'), 'invalid_domain', name);
  }
  for (const name of ['www.brightdental.com', 'www.brightdental.co.uk', 'shop.brightdental.com.au', 'www.bright.de', 'a.b.bright.io']) {
    t.false(isApex(name), name);
    t.is(refusal(name, 'live'), null, name);
  }
});

test('test sites take only names reserved for testing, never a real domain', (t) => {
  t.is(refusal('www.brightdental.com', 'test'), 'test_mode_domain');
  t.is(refusal('www.brightdental.co.uk', 'test'), 'test_mode_domain');
  t.is(refusal('foo.localhost', 'test'), 'invalid_domain');
  t.is(refusal('x.internal', 'test'), 'invalid_domain');
  t.is(refusal('bright.test', 'test'), 'invalid_domain', 'an apex');
  for (const name of ['www.bright.test', 'shop.bright.example', 'www.example.com']) t.is(refusal(name, 'test'), null, name);
});
