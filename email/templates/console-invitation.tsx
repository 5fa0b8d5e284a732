/** @jsxImportSource react */
/** @jsxRuntime automatic */
import { CallToAction, Layout, Para, Title, renderParts, type Rendered } from './layout.tsx';
import type { TemplateInput } from './input.ts';
import { formatMoment, text } from '../format.ts';

/** `console_invitation` (to the person invited): the platform's own, with the accept link. */
export async function consoleInvitation(input: TemplateInput): Promise<Rendered> {
  const { data, platform } = input;
  const account = text(data, 'account_name', input.accountName);
  const role = text(data, 'role', 'member');
  const invitedBy = text(data, 'invited_by') || null;
  const expires = formatMoment(text(data, 'expires_at'));
  const subject = `You are invited to ${account} on ${platform.name}`;
  const who = invitedBy ? `${invitedBy} invited you` : `You are invited`;
  const body = (
    <Layout
      lang="en"
      title={subject}
      preview={`${who} to join ${account} on ${platform.name} as ${role}.`}
      look={platform.look}
      footer={`This invitation was sent by ${platform.name} for ${account}. If you did not expect it, you can ignore this email: nothing happens until the link is used.`}
    >
      <Title>Join {account}</Title>
      <Para>
        {who} to join <strong>{account}</strong> on {platform.name} with the <strong>{role}</strong> role.
      </Para>
      <Para>Accept the invitation to choose your password and sign in.</Para>
      <CallToAction href={input.secret!} label="Accept the invitation" look={platform.look} fallback="Or open this address:" />
      {expires ? <Para muted>The link is personal and works until {expires}.</Para> : null}
    </Layout>
  );
  return { subject, ...(await renderParts(body)) };
}
