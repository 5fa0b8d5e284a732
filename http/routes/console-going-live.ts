import type { App } from './app-type.ts';
import type { AccountRegistry } from './deps.ts';
import { responses } from '../schemas/common.ts';
import { AgreementSchema, BusinessDetailsFieldsSchema, BusinessDetailsSchema, GoingLiveSchema, SignAgreementBody, type BusinessDetailsBody } from '../schemas/console-devs.ts';
import { consoleCaller } from '../plugins/console-session.ts';
import { ApiError } from '../errors.ts';
import { CURRENT_AGREEMENT_VERSION, currentAgreementText } from '../../actors/account/agreement.ts';
import { goingLiveSteps } from '../../actors/account/going-live.ts';
import { callReserveCents } from '../../money/rules/pricing.ts';
import type { adminAccountView } from '../../actors/account/views.ts';
import type { BusinessDetailsFields } from '../../db/business-details.ts';

/** What these routes use. */
export interface ConsoleGoingLiveRouteDeps {
  accounts: AccountRegistry;
}

const hide = { hide: true, tags: ['console'] };

/** The signature on file as the agreement page shows it (the newest of the history is the one on file). */
function signatureOf(account: ReturnType<typeof adminAccountView>) {
  const { agreement_version: version, agreement_signed_at: signedAt, agreement_history: history } = account.onboarding;
  if (!version || !signedAt) return null;
  return { version, signed_at: signedAt, signed_by: history[0]?.version === version ? history[0].signed_by : null };
}

/** The agreement page: the version in force, its text, and the signature on file. */
function agreementView(account: ReturnType<typeof adminAccountView>) {
  return { object: 'agreement' as const, version: CURRENT_AGREEMENT_VERSION, text: currentAgreementText(), signed: signatureOf(account) };
}

/** A submission's text as stored: trimmed, the country upper-case, empty optional fields as null. */
function detailsOf(body: BusinessDetailsBody): BusinessDetailsFields {
  const optional = (v: string | null | undefined) => (v?.trim() ? v.trim() : null);
  return {
    legal_name: body.legal_name.trim(),
    registration_number: body.registration_number.trim(),
    country: body.country.toUpperCase(),
    address: body.address.trim(),
    website: optional(body.website),
    contact_email: body.contact_email.trim().toLowerCase(),
    contact_phone: optional(body.contact_phone),
    business_description: body.business_description.trim(),
  };
}

/**
 * Going live in the console: the checklist, the business details the operator verifies, and the
 * agreement the owner signs. Each write is the actor message the operator's route sends
 * (admin-accounts.ts), with the session's account and person; the operator reads the details at
 * GET /admin/v1/accounts/:id/business_details (admin-accounts.ts) and reviews them with POST …/kyb.
 */
export function registerConsoleGoingLiveRoutes(app: App, services: ConsoleGoingLiveRouteDeps): void {
  const ask = services.accounts.ask.bind(services.accounts);

  app.get(
    '/console/api/going_live',
    { config: { auth: 'session', permission: 'account:read' }, schema: { ...hide, response: responses({ 200: GoingLiveSchema }, [], { auth: 'session' }) } },
    async (request) => {
      const id = consoleCaller(request).accountId;
      const [account, details, balance] = await Promise.all([
        ask(id, { type: 'get_account' }),
        ask(id, { type: 'get_business_details' }),
        ask(id, { type: 'get_balance', mode: 'live' }),
      ]);
      const signed = signatureOf(account);
      return {
        object: 'going_live' as const,
        ...goingLiveSteps({
          kybStatus: account.onboarding.kyb_status,
          kybNote: account.onboarding.kyb_note,
          detailsSubmittedAt: details.submitted_at ? new Date(details.submitted_at) : null,
          agreement: signed && { version: signed.version, signedAt: new Date(signed.signed_at), signedBy: signed.signed_by },
          currentAgreementVersion: CURRENT_AGREEMENT_VERSION,
          liveAvailableCents: balance.available_cents,
          // The reserve readiness compares the live balance with (its insufficient_balance gate), at this month's tier.
          callReserveCents: callReserveCents(balance.rates.minutes_used_this_month),
          minimumTopUpCents: balance.minimum_top_up_cents,
          wentLiveAt: account.went_live_at ? new Date(account.went_live_at) : null,
        }),
      };
    },
  );

  app.get(
    '/console/api/business_details',
    { config: { auth: 'session', permission: 'account:read' }, schema: { ...hide, response: responses({ 200: BusinessDetailsSchema }, [], { auth: 'session' }) } },
    async (request) => ask(consoleCaller(request).accountId, { type: 'get_business_details' }),
  );

  app.put(
    '/console/api/business_details',
    {
      config: { auth: 'session', permission: 'account:write' },
      schema: { ...hide, body: BusinessDetailsFieldsSchema, response: responses({ 200: BusinessDetailsSchema }, ['parameter_missing', 'invalid_parameter'], { auth: 'session' }) },
    },
    async (request) => {
      const s = consoleCaller(request);
      return ask(s.accountId, { type: 'submit_business_details', details: detailsOf(request.body), by: { userId: s.userId, email: s.email } });
    },
  );

  app.get(
    '/console/api/agreement',
    { config: { auth: 'session', permission: 'account:read' }, schema: { ...hide, response: responses({ 200: AgreementSchema }, [], { auth: 'session' }) } },
    async (request) => {
      return agreementView(await ask(consoleCaller(request).accountId, { type: 'get_account' }));
    },
  );

  app.post(
    '/console/api/agreement/sign',
    {
      config: { auth: 'session', permission: 'agreement:sign' },
      schema: { ...hide, body: SignAgreementBody, response: responses({ 200: AgreementSchema }, ['parameter_missing', 'agreement_version_not_current'], { auth: 'session' }) },
    },
    async (request) => {
      const s = consoleCaller(request);
      const version = request.body.version.trim();
      // The owner signs what the page showed: a page read before a new version was published is refused, not signed for it.
      if (version !== CURRENT_AGREEMENT_VERSION) {
        throw new ApiError('agreement_version_not_current', `The agreement in force is version ${CURRENT_AGREEMENT_VERSION}; read it and sign that version.`);
      }
      return agreementView(await ask(s.accountId, { type: 'sign_agreement', version, signer: { userId: s.userId, label: s.name ? `${s.name} <${s.email}>` : s.email } }));
    },
  );
}
