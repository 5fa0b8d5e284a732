import { useState } from 'react';
import { useMode } from '../app/session.tsx';
import { EVENT_TYPES } from '../lists.ts';
import { Select } from '../ui/Form.tsx';
import { PageHeader } from '../ui/Page.tsx';
import { ListTable } from '../ui/Table.tsx';
import { dateTime } from '../ui/format.ts';
import type { ConsoleEvent } from '../types.ts';

/** Every event of the mode shown, newest first, with its data. */
export default function Events() {
  const mode = useMode();
  const [type, setType] = useState('');
  return (
    <>
      <PageHeader title="Events" description="What happened in your account: the same objects your webhooks receive." />
      <div className="filters">
        <Select label="Type" name="type" value={type} onChange={(e) => setType(e.target.value)} options={[{ value: '', label: 'Every type' }, ...EVENT_TYPES.map((t) => ({ value: t, label: t }))]} />
      </div>
      <ListTable<ConsoleEvent>
        path="/events"
        query={{ mode, type }}
        caption="Events"
        empty={{ title: 'No events yet' }}
        columns={[
          { header: 'Type', cell: (e) => <code>{e.type}</code> },
          { header: 'When', cell: (e) => dateTime(e.created_at) },
          {
            header: 'Data',
            cell: (e) => (
              <details>
                <summary>
                  <code>{e.id}</code>
                </summary>
                <pre className="json">{JSON.stringify(e.data, null, 2)}</pre>
              </details>
            ),
          },
        ]}
      />
    </>
  );
}
