import formbody from '@fastify/formbody';
import type { FastifyError, FastifyReply } from 'fastify';
import type { App } from '../routes/app-type.ts';
import type { OnboardingPage, OpenedLink } from '../../actors/customer/onboarding-page.ts';
import type { CustomerRegistry } from '../routes/deps.ts';
import { pageBrand } from '../../actors/account/views.ts';
import { brandedPage, escapeHtml, PAGE_HEADERS, type PageBrand } from './layout.ts';
import { fill, onboardingWords } from './onboarding-words.ts';
import { Type } from '../schemas/common.ts';
import { clientWentAway } from '../plugins/error-boundary.ts';
import { isApiError } from '../errors.ts';
import { calendarWords } from './calendar-words.ts';

const NEUTRAL: PageBrand = { name: 'Onboarding', logoUrl: null, primaryColor: '#1f2937', accentColor: '#2563eb', supportEmail: null };
const MAX_NAME = 120;

export function send(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}

/** The customer's page: its words in the customer's calling language, the reseller's names as given. */
function pageOf(o: OpenedLink, brand: PageBrand) {
  const { lang, words } = onboardingWords(o.locale);
  const names = {
    business: escapeHtml(o.customer.brand_name ?? o.customer.name),
    customer: escapeHtml(o.customer.name),
    brand: escapeHtml(brand.name),
  };
  const page = (title: string, html: string) => brandedPage(brand, title, html, lang);
  return { words, names, page };
}

function termsText(o: OpenedLink, brand: PageBrand): string {
  const { words, names } = pageOf(o, brand);
  return `<div class="terms">
<p>${fill(words.intro, names)}</p>
<ul>
${words.terms.map((term) => `<li>${fill(term, names)}</li>`).join('\n')}
</ul>
</div>`;
}

/** `next` (trusted HTML) follows the completed state's text: the calendar step, when it waits. */
function stateMessage(o: OpenedLink, brand: PageBrand, next = ''): { status: number; html: string } | null {
  const { words, names, page } = pageOf(o, brand);
  switch (o.state) {
    case 'completed': {
      const text = fill(words.alreadyText, { name: escapeHtml(o.link.accepted_by), date: escapeHtml(o.link.completed_at?.toISOString().slice(0, 10)) });
      return { status: 200, html: page(words.alreadyTitle, `<h2>${words.alreadyTitle}</h2><p class="notice">${text}</p>${next}`) };
    }
    case 'replaced':
      return { status: 410, html: page(words.replacedTitle, `<h2>${words.replacedHeading}</h2><p class="notice">${fill(words.replacedText, names)}</p>`) };
    case 'expired':
      return { status: 410, html: page(words.expiredTitle, `<h2>${words.expiredHeading}</h2><p class="notice">${fill(words.expiredText, names)}</p>`) };
    case 'active':
      return null;
  }
}

/**
 * A body the page cannot read (fastify refuses it before the handler: no token is looked at): a
 * media type other than the form's or JSON (415), a form over 16 KB (413), or one that does not
 * parse (400). The person's browser never sends these; a plain page says so, and the log gets one
 * line without a stack.
 */
export function unreadableBody(err: FastifyError): { status: number; text: string } | null {
  // A refusal of the request's head or body made before the page ran (nested too deep, a URL too long, two Hosts).
  const status = err instanceof SyntaxError ? 400 : isApiError(err) && err.status < 500 ? err.status : err.statusCode;
  if (status === 415) return { status, text: 'This page accepts only the form it shows. Open the link again and use the form.' };
  if (status === 413) return { status, text: 'What was sent is larger than this form takes. Open the link again and use the form.' };
  if (status === 400 || status === 414) return { status, text: 'What was sent could not be read. Open the link again and use the form.' };
  return null;
}

/**
 * The done state's next step when the reseller asked for the calendar step and it is not done
 * (issue 24): a calendar link minted now (it replaces an earlier one) and a link to its page.
 */
async function calendarNext(services: OnboardingPageDeps, o: OpenedLink): Promise<string> {
  const provisioning = await services.customers.ask(o.customer.id, { type: 'get_provisioning' });
  const step = provisioning.steps.find((s) => s.step === 'calendar');
  if (!step || step.done) return '';
  const minted = await services.customers.ask(o.customer.id, { type: 'mint_calendar_link' });
  if (!minted.body.url) return '';
  const { words } = calendarWords(o.locale);
  return `\n<p>${words.nextStep}</p>\n<p class="notice"><a href="${escapeHtml(minted.body.url)}">${words.nextLink}</a></p>`;
}

const invalidPage = (reply: FastifyReply) =>
  send(reply, 404, brandedPage(NEUTRAL, 'Link not valid', `<h2>This link is not valid</h2><p class="notice">Check that you copied the whole link, or ask for a new one.</p>`));

/** What these pages use. */
export interface OnboardingPageDeps {
  customers: CustomerRegistry;
  onboardingPage: OnboardingPage;
}

/** The onboarding link page: a customer reads and accepts the calling terms. */
export async function registerOnboardingPages(app: App, services: OnboardingPageDeps): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(formbody, { bodyLimit: 16 * 1024 });
    // People get a page, never a JSON error or a stack trace.
    scope.setErrorHandler((err: FastifyError, request, reply) => {
      // A request refused before the page ran (text that cannot be stored): a page that says so.
      if (isApiError(err) && err.code === 'invalid_string') {
        return send(reply, err.status, brandedPage(NEUTRAL, 'Check what you typed', `<h2>Check what you typed</h2><p class="notice">Part of what was sent contains characters that cannot be saved. Nothing was changed; type it again. <a href="">Go back</a>.</p>`));
      }
      if (clientWentAway(err, request)) {
        request.log.debug({ request_id: request.id, code: err.code }, 'the client closed the connection before its form was read');
        return reply.code(400).send();
      }
      const unreadable = unreadableBody(err);
      if (unreadable) {
        request.log.info({ request_id: request.id, status: unreadable.status, code: err.code ?? err.name }, 'onboarding form body refused');
        return send(reply, unreadable.status, brandedPage(NEUTRAL, 'Not accepted', `<h2>Not accepted</h2><p class="notice">${escapeHtml(unreadable.text)}</p>`));
      }
      request.log.error({ err }, 'onboarding page failed');
      return send(reply, 500, brandedPage(NEUTRAL, 'Something went wrong', `<h2>Something went wrong</h2><p class="notice">Nothing was changed. Try again in a moment.</p>`));
    });
    const typed = scope as unknown as App;
    const params = Type.Object({ token: Type.String() });

    typed.get('/onboarding/:token', { config: { auth: 'none' }, schema: { hide: true, params } }, async (request, reply) => {
      const opened = await services.onboardingPage.open(request.params.token);
      if (!opened) return invalidPage(reply);
      const brand = pageBrand(opened.account);
      const message = stateMessage(opened, brand, opened.state === 'completed' ? await calendarNext(services, opened) : '');
      if (message) return send(reply, message.status, message.html);
      const { words, names, page } = pageOf(opened, brand);
      return send(
        reply,
        200,
        page(
          words.title,
          `<h2>${fill(words.heading, names)}</h2>
${termsText(opened, brand)}
<form method="post">
<label for="accepted_by">${words.nameLabel}</label>
<input type="text" id="accepted_by" name="accepted_by" maxlength="${MAX_NAME}" required autocomplete="name">
<label><input type="checkbox" name="agree" value="yes" required> ${fill(words.agree, names)}</label>
<button type="submit">${words.submit}</button>
</form>`,
        ),
      );
    });

    typed.post(
      '/onboarding/:token',
      { config: { auth: 'none' }, schema: { hide: true, params } },
      async (request, reply) => {
        const opened = await services.onboardingPage.open(request.params.token);
        if (!opened) return invalidPage(reply);
        const brand = pageBrand(opened.account);
        const message = stateMessage(opened, brand);
        if (message) return send(reply, message.status, message.html);
        const { words, names, page } = pageOf(opened, brand);
        const form = (request.body ?? {}) as Record<string, unknown>;
        const name = typeof form.accepted_by === 'string' ? form.accepted_by.trim() : '';
        if (!name || name.length > MAX_NAME || form.agree !== 'yes') {
          return send(
            reply,
            400,
            page(words.title, `<h2>${words.almostHeading}</h2><p class="notice">${fill(words.almostText, { max: MAX_NAME })} <a href="">${words.goBack}</a>.</p>`),
          );
        }
        try {
          await services.customers.ask(opened.customer.id, { type: 'complete_onboarding', linkId: opened.link.id, acceptedBy: name });
        } catch {
          // The link stopped being active between the read and the write (another tab accepted it).
          const again = await services.onboardingPage.open(request.params.token);
          const late = again && stateMessage(again, brand);
          if (late) return send(reply, late.status, late.html);
          throw new Error('onboarding completion failed');
        }
        return send(
          reply,
          200,
          page(
            words.thanksTitle,
            `<h2>${fill(words.thanksHeading, { name: escapeHtml(name) })}</h2><p class="notice">${fill(words.thanksText, names)}</p>${await calendarNext(services, opened)}`,
          ),
        );
      },
    );
  });
}
