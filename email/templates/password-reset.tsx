/** @jsxImportSource react */
/** @jsxRuntime automatic */
import { CallToAction, Layout, Para, Title, renderParts, type Rendered } from './layout.tsx';
import type { TemplateInput } from './input.ts';
import { formatMoment, text } from '../format.ts';

/** `password_reset` (to the person who asked): the platform's own, with the reset link. */
export async function passwordReset(input: TemplateInput): Promise<Rendered> {
  const { data, platform } = input;
  const expires = formatMoment(text(data, 'expires_at'));
  const subject = `Reset your ${platform.name} password`;
  const body = (
    <Layout
      lang="en"
      title={subject}
      preview={`Choose a new password for ${platform.name}.`}
      look={platform.look}
      footer={`If you did not ask to reset your password, ignore this email: your password stays as it is. ${platform.name} never asks for your password by email.`}
    >
      <Title>Reset your password</Title>
      <Para>Someone, hopefully you, asked to reset the password of your {platform.name} console account.</Para>
      <CallToAction href={input.secret!} label="Choose a new password" look={platform.look} fallback="Or open this address:" />
      {expires ? <Para muted>The link works once, until {expires}.</Para> : null}
    </Layout>
  );
  return { subject, ...(await renderParts(body)) };
}
