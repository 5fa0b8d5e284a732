import { useId, type ReactNode, type InputHTMLAttributes, type SelectHTMLAttributes, type TextareaHTMLAttributes } from 'react';
import { messageOf } from '../api.ts';

interface FieldProps {
  label: string;
  hint?: ReactNode;
  error?: string | null;
}

/** What a control needs to be tied to its label, hint and error for screen readers. */
interface ControlProps {
  id: string;
  'aria-invalid'?: true;
  'aria-describedby'?: string;
}

/** A labelled control with its hint and error text tied to it. */
function Labelled({ label, hint, error, control }: FieldProps & { control: (props: ControlProps) => ReactNode }) {
  const id = useId();
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {hint && (
        <p id={`${id}-hint`} className="field-hint">
          {hint}
        </p>
      )}
      {control({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': described })}
      {error && (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      )}
    </div>
  );
}

export function Field({ label, hint, error, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  return <Labelled label={label} hint={hint} error={error} control={(props) => <input {...props} {...input} />} />;
}

export function TextArea({ label, hint, error, ...area }: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return <Labelled label={label} hint={hint} error={error} control={(props) => <textarea {...props} {...area} />} />;
}

export function Select({ label, hint, error, options, ...select }: FieldProps & { options: { value: string; label: string }[] } & SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <Labelled
      label={label}
      hint={hint}
      error={error}
      control={(props) => (
        <select {...props} {...select}>
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    />
  );
}

export function Checkbox({ label, hint, ...input }: { label: ReactNode; hint?: ReactNode } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field field-check">
      <input id={id} type="checkbox" {...input} />
      <label htmlFor={id}>{label}</label>
      {hint && <p className="field-hint">{hint}</p>}
    </div>
  );
}

/** The error of a submitted form, in words, announced. */
export function FormError({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="form-error" role="alert">
      {messageOf(error)}
    </p>
  );
}

export function Submit({ pending, children, variant = 'primary' }: { pending?: boolean; children: ReactNode; variant?: 'primary' | 'secondary' | 'danger' }) {
  return (
    <button type="submit" className={variant === 'secondary' ? 'button' : `button button-${variant}`} disabled={pending} aria-busy={pending || undefined}>
      {pending ? 'Working…' : children}
    </button>
  );
}

/** The values of a form as strings (empty fields left out). */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new FormData(form).entries()) if (typeof v === 'string' && v.trim() !== '') out[k] = v.trim();
  return out;
}

/** A form of the console: submitting it runs `onSubmit` with the form (never a page load). */
export function Form({ onSubmit, children, className = 'form' }: { onSubmit: (form: HTMLFormElement) => void; children: ReactNode; className?: string }) {
  return (
    <form
      className={className}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(e.currentTarget);
      }}
    >
      {children}
    </form>
  );
}
