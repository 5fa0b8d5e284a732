import formbody from '@fastify/formbody';
import type { FastifyError, FastifyReply } from 'fastify';
import type { App } from '../routes/app-type.ts';
import type { OnboardingPage, OpenedLink } from '../../actors/customer/onboarding-page.ts';
import type { CustomerRegistry } from '../routes/deps.ts';
import { pageBrand } from '../../actors/account/views.ts';
import { brandedPage, escapeHtml, PAGE_HEADERS, type PageBrand } from './layout.ts';
import { Type } from '../schemas/common.ts';
import { clientWentAway } from '../plugins/error-boundary.ts';
import { isApiError } from '../errors.ts';

const NEUTRAL: PageBrand = { name: 'Onboarding', logoUrl: null, primaryColor: '#1f2937', accentColor: '#2563eb', supportEmail: null };
const MAX_NAME = 120;

function send(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}

function termsText(o: OpenedLink, brandName: string): string {
  const business = escapeHtml(o.customer.brand_name ?? o.customer.name);
  const brand = escapeHtml(brandName);
  return `<div class="terms">
<p>By accepting, you confirm on behalf of <strong>${business}</strong> that:</p>
<ul>
<li>${brand} may place outbound sales calls to businesses on ${business}'s behalf, using an AI voice agent that says it is an AI when asked;</li>
<li>calls are made only within the legal calling hours of the called number's country, and numbers on do-not-call lists are never called;</li>
<li>anyone who asks not to be called again is added to the do-not-call list at once;</li>
<li>calls may be recorded and transcribed, and the recording is disclosed where the law requires it;</li>
<li>you are authorised to accept these terms for ${business}.</li>
</ul>
</div>`;
}

function stateMessage(o: OpenedLink, brandName: string): { status: number; title: string; html: string } | null {
  const brand = escapeHtml(brandName);
  switch (o.state) {
    case 'completed':
      return {
        status: 200,
        title: 'Already accepted',
        html: `<h2>Already accepted</h2><p class="notice">These terms were accepted by ${escapeHtml(o.link.accepted_by)} on ${escapeHtml(
          o.link.completed_at?.toISOString().slice(0, 10),
        )}. There is nothing more to do.</p>`,
      };
    case 'replaced':
      return {
        status: 410,
        title: 'Link replaced',
        html: `<h2>This link has been replaced</h2><p class="notice">A newer link was sent for ${escapeHtml(o.customer.name)}. Use the most recent link from ${brand}, or ask them for a new one.</p>`,
      };
    case 'expired':
      return {
        status: 410,
        title: 'Link expired',
        html: `<h2>This link has expired</h2><p class="notice">Onboarding links last 30 days. Ask ${brand} to send you a new one.</p>`,
      };
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
function unreadableBody(err: FastifyError): { status: number; text: string } | null {
  // A refusal of the request's head or body made before the page ran (nested too deep, a URL too long, two Hosts).
  const status = err instanceof SyntaxError ? 400 : isApiError(err) && err.status < 500 ? err.status : err.statusCode;
  if (status === 415) return { status, text: 'This page accepts only the form it shows. Open the link again and use the form.' };
  if (status === 413) return { status, text: 'What was sent is larger than this form takes. Open the link again and use the form.' };
  if (status === 400 || status === 414) return { status, text: 'What was sent could not be read. Open the link again and use the form.' };
  return null;
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
      const message = stateMessage(opened, brand.name);
      if (message) return send(reply, message.status, brandedPage(brand, message.title, message.html));
      const business = escapeHtml(opened.customer.brand_name ?? opened.customer.name);
      return send(
        reply,
        200,
        brandedPage(
          brand,
          'Calling terms',
          `<h2>Calling terms for ${business}</h2>
${termsText(opened, brand.name)}
<form method="post">
<label for="accepted_by">Your full name</label>
<input type="text" id="accepted_by" name="accepted_by" maxlength="${MAX_NAME}" required autocomplete="name">
<label><input type="checkbox" name="agree" value="yes" required> I accept these terms for ${business}</label>
<button type="submit">Accept the terms</button>
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
        const message = stateMessage(opened, brand.name);
        if (message) return send(reply, message.status, brandedPage(brand, message.title, message.html));
        const form = (request.body ?? {}) as Record<string, unknown>;
        const name = typeof form.accepted_by === 'string' ? form.accepted_by.trim() : '';
        if (!name || name.length > MAX_NAME || form.agree !== 'yes') {
          return send(
            reply,
            400,
            brandedPage(
              brand,
              'Calling terms',
              `<h2>Almost there</h2><p class="notice">Type your full name (up to ${MAX_NAME} characters) and tick the box to accept. <a href="">Go back</a>.</p>`,
            ),
          );
        }
        try {
          await services.customers.ask(opened.customer.id, { type: 'complete_onboarding', linkId: opened.link.id, acceptedBy: name });
        } catch {
          // The link stopped being active between the read and the write (another tab accepted it).
          const again = await services.onboardingPage.open(request.params.token);
          const late = again && stateMessage(again, brand.name);
          if (late) return send(reply, late.status, brandedPage(brand, late.title, late.html));
          throw new Error('onboarding completion failed');
        }
        return send(
          reply,
          200,
          brandedPage(brand, 'Thank you', `<h2>Thank you, ${escapeHtml(name)}</h2><p class="notice">The calling terms are accepted for ${escapeHtml(opened.customer.brand_name ?? opened.customer.name)}. You can close this page.</p>`),
        );
      },
    );
  });
}
