import { readFileSync } from 'node:fs';

/**
 * The reseller agreement in force: its version and text (docs/agreement/<version>.md), read once.
 * White label: it names neither the service nor any supplier. A new version is a new file and a
 * new `CURRENT_AGREEMENT_VERSION`; the console then asks the owner to sign it.
 */
export const CURRENT_AGREEMENT_VERSION = '2026-11';

let text: string | undefined;

/** The text of the agreement in force (Markdown). */
export function currentAgreementText(): string {
  text ??= readFileSync(new URL(`../../docs/agreement/${CURRENT_AGREEMENT_VERSION}.md`, import.meta.url), 'utf8');
  return text;
}
