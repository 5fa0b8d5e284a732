import qrcode from 'qrcode-generator';

/**
 * A QR code of a short text, for the two-factor setup address: Kazuhiko Arase's qrcode-generator
 * (ISO/IEC 18004), byte mode holding the text's UTF-8, error correction level M, the smallest
 * version that holds it, up to version 15 (a larger code is too dense to scan off a screen).
 */
const MAX_VERSION = 15;

/** The QR code of `text` (UTF-8), as rows of modules (true = dark); throws when it needs more than version 15. */
export function qrModules(text: string): boolean[][] {
  const qr = qrcode(0, 'M');
  // The library writes each character's low byte: give it the UTF-8 bytes one character each.
  qr.addData(String.fromCharCode(...new TextEncoder().encode(text)), 'Byte');
  qr.make();
  const size = qr.getModuleCount();
  if (size > MAX_VERSION * 4 + 17) throw new RangeError(`text too long for a QR code here: ${text.length} characters`);
  return Array.from({ length: size }, (_, y) => Array.from({ length: size }, (_, x) => qr.isDark(y, x)));
}

/** An SVG path drawing the dark modules, one unit each, offset by a quiet zone of `border`. */
export function qrPath(modules: boolean[][], border = 4): string {
  let d = '';
  modules.forEach((row, y) => row.forEach((dark, x) => dark && (d += `M${x + border},${y + border}h1v1h-1z`)));
  return d;
}
