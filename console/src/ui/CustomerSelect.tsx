import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { useMode } from '../app/session.tsx';
import { Select } from './Form.tsx';
import type { CustomerRow, List } from '../types.ts';

/** A filter by customer: the mode's customers by name (the first 200), or every customer. */
export function CustomerSelect({ value, onChange, hint }: { value: string; onChange: (id: string) => void; hint?: string }) {
  const mode = useMode();
  const customers = useQuery({ queryKey: ['/customers', 'names', mode], queryFn: () => api.get<List<CustomerRow>>('/customers', { mode, limit: 200 }) });
  const rows = customers.data?.data ?? [];
  const options = [{ value: '', label: 'Every customer' }, ...rows.map((c) => ({ value: c.id, label: c.external_ref ? `${c.name} (${c.external_ref})` : c.name }))];
  // A customer named in the address but not among the first 200 (or by its external_ref) stays choosable.
  if (value && !rows.some((c) => c.id === value)) options.push({ value, label: value });
  return <Select label="Customer" name="customer_id" hint={hint} value={value} onChange={(e) => onChange(e.target.value)} options={options} />;
}
