/**
 * Which host names a customer may point at a site (pure).
 */

/** A host name a customer may point at a site: letters, digits and hyphens in labels, a dot, no IP. */
export function normaliseDomain(text: string): string | null {
  const name = text.trim().toLowerCase().replace(/\.$/, '');
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(name)) return null;
  return name;
}
