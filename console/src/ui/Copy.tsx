import { useState } from 'react';

async function writeClipboard(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard permission (an insecure origin, a test browser): select-and-copy instead.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

/** A button that copies `text`; says "Copied" where a screen reader hears it. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <span className="copy">
      <button
        type="button"
        className="button button-small"
        onClick={async () => {
          setState((await writeClipboard(text)) ? 'copied' : 'failed');
          setTimeout(() => setState('idle'), 2000);
        }}
      >
        {label}
      </button>
      <span role="status" className="copy-status">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select the text and copy it' : ''}
      </span>
    </span>
  );
}

/** A value to copy: shown in full (selectable), with a copy button. */
export function CopyField({ label, value }: { label: string; value: string }) {
  return (
    <div className="copy-field">
      <span className="copy-field-label">{label}</span>
      <code className="copy-field-value" data-testid="copy-value">
        {value}
      </code>
      <CopyButton text={value} label={`Copy ${label.toLowerCase()}`} />
    </div>
  );
}

/** A secret the server shows once: with the copy button and the warning that it will not be shown again. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone?: () => void }) {
  return (
    <div className="secret-once" role="region" aria-label={`${label}, shown once`}>
      <p className="secret-once-warning">
        <strong>Copy this {label.toLowerCase()} now.</strong> It is shown only once; we keep only a hash of it.
      </p>
      <CopyField label={label} value={value} />
      {onDone && (
        <button type="button" className="button" onClick={onDone}>
          I have copied it
        </button>
      )}
    </div>
  );
}
