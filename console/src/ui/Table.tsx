import { useState, type ReactNode } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, type Query } from '../api.ts';
import type { List } from '../types.ts';
import { Empty, ErrorNote, Loading } from './Page.tsx';

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** Right-aligned (amounts, counts). */
  numeric?: boolean;
}

/** A table that becomes labelled cards below 640 px (each cell carries its column's name). */
export function DataTable<T>({ caption, columns, rows, rowKey }: { caption: string; columns: Column<T>[]; rows: T[]; rowKey: (row: T) => string }) {
  return (
    <div className="table-wrap">
      <table className="table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.header} scope="col" className={c.numeric ? 'num' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td key={c.header} data-label={c.header} className={c.numeric ? 'num' : undefined}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Previous/Next over cursor pages (`starting_after` the last id of the page before). */
export function Pager({ page, hasPrevious, hasMore, onPrevious, onNext }: { page: number; hasPrevious: boolean; hasMore: boolean; onPrevious: () => void; onNext: () => void }) {
  if (!hasPrevious && !hasMore) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="button button-small" disabled={!hasPrevious} onClick={onPrevious}>
        Previous
      </button>
      <span className="muted">Page {page}</span>
      <button type="button" className="button button-small" disabled={!hasMore} onClick={onNext}>
        Next
      </button>
    </nav>
  );
}

/**
 * A list route read a page at a time. The cursors of the pages before are kept, so Previous goes
 * back; a change of filters (the query) starts again at the first page.
 */
export function useCursorList<T extends { id: string }>(path: string, query: Query, limit = 25, paged = true) {
  const filterKey = JSON.stringify(query);
  const [state, setState] = useState<{ filterKey: string; cursors: string[] }>({ filterKey, cursors: [] });
  const cursors = state.filterKey === filterKey ? state.cursors : [];
  const startingAfter = cursors[cursors.length - 1];
  const result = useQuery({
    queryKey: [path, query, startingAfter ?? null, limit],
    // A route that answers its whole (short) list takes no paging parameters.
    queryFn: () => api.get<List<T>>(path, paged ? { ...query, limit, starting_after: startingAfter } : query),
    placeholderData: keepPreviousData,
  });
  const data = result.data;
  return {
    ...result,
    pager: {
      page: cursors.length + 1,
      hasPrevious: cursors.length > 0,
      hasMore: Boolean(data?.has_more),
      onPrevious: () => setState({ filterKey, cursors: cursors.slice(0, -1) }),
      onNext: () => {
        const last = data?.data[data.data.length - 1];
        if (last) setState({ filterKey, cursors: [...cursors, last.id] });
      },
    },
  };
}

/** A paginated list route as a table, with loading, error and empty states. */
export function ListTable<T extends { id: string }>({
  path,
  query,
  caption,
  columns,
  empty,
  limit,
  paged = true,
  only,
}: {
  path: string;
  query: Query;
  caption: string;
  columns: Column<T>[];
  empty: { title: string; body?: ReactNode };
  limit?: number;
  /** False for a route that answers its whole list at once. */
  paged?: boolean;
  /** Rows to show of what the route answered (a route that answers both modes at once). */
  only?: (row: T) => boolean;
}) {
  const list = useCursorList<T>(path, query, limit, paged);
  if (list.error) return <ErrorNote error={list.error} />;
  if (!list.data) return <Loading what={`Loading ${caption.toLowerCase()}`} />;
  const rows = only ? list.data.data.filter(only) : list.data.data;
  if (rows.length === 0 && !list.pager.hasPrevious) return <Empty title={empty.title}>{empty.body}</Empty>;
  return (
    <>
      <DataTable caption={caption} columns={columns} rows={rows} rowKey={(r) => r.id} />
      <Pager {...list.pager} />
    </>
  );
}
