import { useEffect, type ReactNode } from 'react';

/** The frame of the pages reached without signing in. */
export function PublicCard({ title, children }: { title: string; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Console`;
  }, [title]);
  return (
    <main className="public" id="main">
      <div className="public-card">
        <p className="public-brand">Console</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
