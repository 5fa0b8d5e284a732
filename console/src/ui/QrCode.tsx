import { useMemo } from 'react';
import { qrModules, qrPath } from './qr.ts';

/** `text` as a QR code (SVG, dark on white, with its quiet zone); nothing when it does not fit. */
export function QrCode({ text, label }: { text: string; label: string }) {
  const drawn = useMemo(() => {
    try {
      const modules = qrModules(text);
      return { size: modules.length + 8, path: qrPath(modules) };
    } catch {
      return null;
    }
  }, [text]);
  if (!drawn) return null;
  return (
    <svg className="qr" viewBox={`0 0 ${drawn.size} ${drawn.size}`} role="img" aria-label={label} shapeRendering="crispEdges">
      <rect width={drawn.size} height={drawn.size} fill="#ffffff" />
      <path d={drawn.path} fill="#000000" />
    </svg>
  );
}
