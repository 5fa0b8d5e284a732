/** @jsxImportSource react */
/** @jsxRuntime automatic */
import type { ReactNode } from 'react';
import { Body, Button, Container, Head, Heading, Hr, Html, Img, Link, Preview, Section, Text } from '@react-email/components';
import { render } from '@react-email/render';

/**
 * The frame every email shares (react-email: tables and inline styles that mail clients keep):
 * a band in the sender's colour with its logo or name, the message on white, a footer. 600 px
 * wide at most, one column, so it reads on a phone as on a desktop.
 */

/** Who an email looks like it comes from: the platform for its own emails, the reseller's brand on its behalf. */
export interface Look {
  name: string;
  /** https URL of a logo; the name is written instead when null. */
  logoUrl: string | null;
  /** The band's colour and the text on it (black or white, whichever reaches WCAG AA on it). */
  primary: string;
  onPrimary: string;
  /** The button's colour and its text. */
  accent: string;
  onAccent: string;
  /** Links in the text, readable on white. */
  link: string;
}

/** What a template produces. */
export interface Rendered {
  subject: string;
  html: string;
  text: string;
}

const FONT = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";
const INK = '#111827';
const MUTED = '#4b5563';

export function Layout(props: { lang: string; title: string; preview: string; look: Look; footer: ReactNode; children: ReactNode }) {
  const { look } = props;
  return (
    <Html lang={props.lang} dir="ltr">
      <Head>
        <title>{props.title}</title>
      </Head>
      <Preview>{props.preview}</Preview>
      <Body style={{ backgroundColor: '#f3f4f6', margin: 0, padding: '24px 8px', fontFamily: FONT, color: INK }}>
        <Container style={{ maxWidth: '600px', backgroundColor: '#ffffff', borderRadius: '8px', overflow: 'hidden' }}>
          <Section style={{ backgroundColor: look.primary, padding: '20px 32px' }}>
            {look.logoUrl ? (
              <Img src={look.logoUrl} alt={look.name} height="40" style={{ height: '40px', width: 'auto', maxWidth: '240px' }} />
            ) : (
              <Text style={{ color: look.onPrimary, fontSize: '20px', lineHeight: '28px', fontWeight: 700, margin: 0 }}>{look.name}</Text>
            )}
          </Section>
          <Section style={{ padding: '8px 32px 16px' }}>{props.children}</Section>
          <Hr style={{ borderColor: '#e5e7eb', margin: '0 32px', width: 'auto' }} />
          <Section style={{ padding: '8px 32px 24px' }}>
            <Text style={{ color: MUTED, fontSize: '13px', lineHeight: '20px', margin: '8px 0' }}>{props.footer}</Text>
          </Section>
        </Container>
      </Body>
    </Html>
  );
}

export function Title({ children }: { children: ReactNode }) {
  return (
    <Heading as="h1" style={{ color: INK, fontSize: '22px', lineHeight: '30px', fontWeight: 700, margin: '24px 0 8px' }}>
      {children}
    </Heading>
  );
}

export function Para({ children, muted = false }: { children: ReactNode; muted?: boolean }) {
  return <Text style={{ color: muted ? MUTED : INK, fontSize: '15px', lineHeight: '24px', margin: '12px 0' }}>{children}</Text>;
}

/** The one thing to do: a button in the accent colour, and its address written out for clients that show no buttons. */
export function CallToAction({ href, label, look, fallback }: { href: string; label: string; look: Look; fallback: string }) {
  return (
    <>
      <Section style={{ margin: '24px 0 8px' }}>
        <Button
          href={href}
          style={{ backgroundColor: look.accent, color: look.onAccent, borderRadius: '6px', fontSize: '16px', fontWeight: 600, padding: '12px 22px', textDecoration: 'none' }}
        >
          {label}
        </Button>
      </Section>
      {/* The plain-text part already writes the address beside the button's label. */}
      <Text data-skip-in-text="true" style={{ color: MUTED, fontSize: '13px', lineHeight: '20px', margin: '12px 0', wordBreak: 'break-all' }}>
        {fallback}{' '}
        <Link href={href} style={{ color: look.link, textDecoration: 'underline' }}>
          {href}
        </Link>
      </Text>
    </>
  );
}

/** Label and value pairs (an amount, a card, a date). */
export function Facts({ rows }: { rows: [string, string][] }) {
  return (
    <Section style={{ backgroundColor: '#f9fafb', borderRadius: '6px', padding: '8px 16px', margin: '16px 0' }}>
      {rows.map(([label, value]) => (
        <Text key={label} style={{ fontSize: '15px', lineHeight: '22px', margin: '6px 0', color: INK }}>
          <span style={{ color: MUTED }}>{label}: </span>
          <strong>{value}</strong>
        </Text>
      ))}
    </Section>
  );
}

export function MailLink({ href, look, children }: { href: string; look: Look; children: ReactNode }) {
  return (
    <Link href={href} style={{ color: look.link, textDecoration: 'underline' }}>
      {children}
    </Link>
  );
}

/** The HTML and plain-text parts of one email. */
export async function renderParts(element: ReactNode): Promise<{ html: string; text: string }> {
  const [html, text] = await Promise.all([render(element), render(element, { plainText: true })]);
  return { html, text };
}
