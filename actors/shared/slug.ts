/**
 * The letters and digits of a name as a lower-case ASCII slug joined by dashes, at most 40
 * characters (accents dropped: "Café Zürich" → "cafe-zurich"); empty when nothing is left.
 */
export function nameSlug(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
}
