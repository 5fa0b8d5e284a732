import test from 'ava';
import { countryOfHost, readSite, specificationLines } from '../../actors/websites/read-site.ts';

/** A plumber's site the way they are written: JSON-LD, a services list, tel: and mailto: links, a supplier's credit. */
const RICH = `<!doctype html><html><head><title>Leeds Plumbing &amp; Heating | Emergency plumber in Leeds</title>
<meta name="description" content="Family-run plumbers serving Leeds since 1998. Boiler repairs, bathroom fitting and 24-hour call-outs.">
<script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"WebSite","name":"x"},{"@type":"Plumber","name":"Leeds Plumbing",
"telephone":"+44 113 496 0123","email":"mailto:hello@leedsplumbing.example",
"address":{"@type":"PostalAddress","streetAddress":"12 Kirkgate","addressLocality":"Leeds","postalCode":"LS1 6BY","addressCountry":"GB"},
"openingHoursSpecification":[{"@type":"OpeningHoursSpecification","dayOfWeek":["Monday","Tuesday","Wednesday","Thursday","Friday"],"opens":"08:00","closes":"18:00"},
{"dayOfWeek":"https://schema.org/Saturday","opens":"09:00:00","closes":"13:00:00"}]}]}</script>
<script type="application/ld+json">{ broken json </script>
<script>var phone = "+44 20 7946 0000"; // not on the page</script>
</head><body><nav><ul><li><a href="/">Home</a></li></ul></nav>
<section><h2>Our services</h2><ul><li>Boiler repair and servicing</li><li><strong>Bathroom fitting</strong> from design to tiles</li><li>Emergency call-outs</li><li>Hosting by Cloudflare</li></ul></section>
<h2>About</h2><p>Call <a href="tel:0113%20496%200124">0113 496 0124</a> or write to <a href="mailto:Office@LeedsPlumbing.example?subject=Hi">us</a>.</p>
<img src="logo@2x.png" alt=""><p>Also office2@leedsplumbing.example, or 0113 496 0125.</p>
</body></html>`;

test('readSite reads title, description, services, phones, emails, address and hours from a rich page', (t) => {
  const r = readSite(RICH, 'https://leedsplumbing.example/', { country: 'GB' });
  t.is(r.title, 'Leeds Plumbing & Heating | Emergency plumber in Leeds');
  t.is(r.description, 'Family-run plumbers serving Leeds since 1998. Boiler repairs, bathroom fitting and 24-hour call-outs.');
  // The list item's own heading is its name; the supplier's credit is left out.
  t.deepEqual(r.services, ['Boiler repair and servicing', 'Bathroom fitting', 'Emergency call-outs']);
  // tel: links first, then JSON-LD, then the text; the number inside a script is not on the page.
  t.deepEqual(r.phones, ['+441134960124', '+441134960123', '+441134960125']);
  t.deepEqual(r.emails, ['office@leedsplumbing.example', 'hello@leedsplumbing.example', 'office2@leedsplumbing.example']);
  t.is(r.address, '12 Kirkgate, Leeds LS1 6BY, GB');
  t.deepEqual(r.openingHours, ['Mo-Fr 08:00-18:00', 'Sa 09:00-13:00']);
});

test('readSite falls back to <address>, text hours tables and class-named service blocks', (t) => {
  const html = `<html lang="de"><head><title>Bäckerei Sonnenschein</title></head><body>
  <div class="leistungen-grid"><div><h3>Brot &amp; Brötchen</h3><p>Täglich frisch.</p></div><div><h3>Torten auf Bestellung</h3></div></div>
  <h2>Öffnungszeiten</h2><table><tr><td>Mo–Fr</td><td>6:30 – 18:00</td></tr><tr><td>Sa</td><td>7:00 – 12:00</td></tr><tr><td>So</td><td>geschlossen</td></tr><tr><td>Hinweis</td><td>Parkplatz hinten</td></tr></table>
  <address>Bäckerei Sonnenschein<br>Hauptstraße 5<br>80331 München<br>Tel. 089 12345678<br>info@sonnenschein.example</address>
  </body></html>`;
  const r = readSite(html, 'https://sonnenschein.example.de/');
  t.is(r.title, 'Bäckerei Sonnenschein');
  t.is(r.description, null);
  t.deepEqual(r.services, ['Brot & Brötchen', 'Torten auf Bestellung']);
  t.deepEqual(r.openingHours, ['Mo–Fr 6:30 – 18:00', 'Sa 7:00 – 12:00', 'So geschlossen']);
  // Phone and e-mail lines are contact details, not the address.
  t.is(r.address, 'Bäckerei Sonnenschein, Hauptstraße 5, 80331 München');
  t.deepEqual(r.emails, ['info@sonnenschein.example']);
  // The country comes from the .de domain, so the national number is found.
  t.deepEqual(r.phones, ['+498912345678']);
});

test('readSite survives empty, broken and hostile HTML with empty findings', (t) => {
  for (const html of ['', 'not html at all', '<html><head><title></title></head>', '<<<>>><div><ul><li>', '<script type="application/ld+json">[[[[</script>']) {
    const r = readSite(html, 'http://x.example/');
    t.deepEqual(r, { title: null, description: null, services: [], phones: [], emails: [], address: null, openingHours: [] }, html);
  }
  const hostile = readSite('<title>&lt;script&gt;alert(1)&lt;/script&gt;</title><meta name="description" content="&lt;img src=x onerror=alert(1)&gt; Best">', 'http://x.example/');
  // Text is returned as text (escaping is the composer's job): nothing here is markup any more.
  t.is(hostile.title, '<script>alert(1)</script>');
  t.is(hostile.description, '<img src=x onerror=alert(1)> Best');
});

test('readSite bounds every field', (t) => {
  const items = Array.from({ length: 40 }, (_, i) => `<li>Service number ${i}</li>`).join('');
  const html = `<title>${'T'.repeat(1000)}</title><meta name="description" content="${'word '.repeat(400)}"><h2>Services</h2><ul>${items}</ul>`;
  const r = readSite(html, 'http://x.example/');
  t.true(r.title!.length <= 200);
  t.true(r.description!.length <= 500);
  t.is(r.services.length, 12);
});

test('a description naming a supplier is dropped', (t) => {
  const r = readSite('<meta name="description" content="Our phone line runs on Twilio and is answered day and night.">', 'http://x.example/');
  t.is(r.description, null);
});

test('opening hours specifications group days with the same hours', (t) => {
  const spec = (days: string[], opens: string, closes: string) => ({ dayOfWeek: days, opens, closes });
  t.deepEqual(
    specificationLines([spec(['Monday', 'Wednesday'], '09:00', '17:00'), spec(['Tuesday'], '09:00', '17:00'), spec(['Saturday', 'Sunday'], '10:00', '14:00'), spec(['Friday'], '9:00', '12:00:00')]),
    ['Mo-We 09:00-17:00', 'Fr 09:00-12:00', 'Sa,Su 10:00-14:00'],
  );
  t.deepEqual(specificationLines([{ dayOfWeek: 'Funday', opens: '09:00', closes: '10:00' }, { dayOfWeek: 'Monday' }, null]), []);
});

test('countryOfHost reads country-code domains only', (t) => {
  t.is(countryOfHost('https://shop.example.co.uk/x'), 'GB');
  t.is(countryOfHost('https://example.de'), 'DE');
  t.is(countryOfHost('https://example.com'), undefined);
  t.is(countryOfHost('https://example.io'), undefined);
  t.is(countryOfHost('nonsense'), undefined);
});
