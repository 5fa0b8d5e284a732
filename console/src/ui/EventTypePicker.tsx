import { EVENT_TYPES } from '../lists.ts';

/** Event types to send: none ticked means every type. */
export function EventTypePicker({ value, onChange }: { value: string[]; onChange: (v: string[]) => void }) {
  return (
    <fieldset>
      <legend>Event types</legend>
      <p className="field-hint">None ticked: every event type, including ones added later.</p>
      <div className="checks">
        {EVENT_TYPES.map((t) => (
          <label key={t}>
            <input type="checkbox" checked={value.includes(t)} onChange={(e) => onChange(e.target.checked ? [...value, t] : value.filter((x) => x !== t))} />
            <code>{t}</code>
          </label>
        ))}
      </div>
    </fieldset>
  );
}
