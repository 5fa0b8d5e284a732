/**
 * Text on a coloured background: black or white, whichever reads better by WCAG 2.x contrast
 * (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio; AA asks 4.5:1 for normal text, success
 * criterion 1.4.3). Used by every page that puts text on a brand colour: the onboarding and chat
 * pages (http/pages/layout.ts) and customers' sites (actors/websites/composer.ts). Pure.
 */

/** WCAG AA for normal text. */
export const AA_NORMAL_TEXT = 4.5;

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/** `#rgb` or `#rrggbb` as its three channels 0–255; null for anything else. */
export function parseHexColour(hex: string): [number, number, number] | null {
  if (!HEX.test(hex)) return null;
  const digits = hex.length === 4 ? [...hex.slice(1)].map((d) => d + d).join('') : hex.slice(1);
  const n = parseInt(digits, 16);
  return [n >> 16, (n >> 8) & 0xff, n & 0xff];
}

/** Relative luminance of an sRGB colour (WCAG 2.x definition), 0 for black to 1 for white. */
export function relativeLuminance(hex: string): number {
  const rgb = parseHexColour(hex);
  if (!rgb) throw new RangeError(`not a #rgb or #rrggbb colour: ${hex}`);
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The contrast ratio of two colours, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * The text colour for `background`: white when white text reaches AA (4.5:1) on it, else black
 * when black does, else whichever contrasts more (no colour fails both by much: one of the two
 * always reaches at least 4.58:1).
 */
export function textColourOn(background: string): '#ffffff' | '#000000' {
  const white = contrastRatio(background, '#ffffff');
  const black = contrastRatio(background, '#000000');
  if (white >= AA_NORMAL_TEXT) return '#ffffff';
  if (black >= AA_NORMAL_TEXT) return '#000000';
  return white >= black ? '#ffffff' : '#000000';
}
