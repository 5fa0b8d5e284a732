import { isRouteErrorResponse, Link, useRouteError } from 'react-router';

/** What a page that failed to load or threw shows instead of a blank screen. */
export function RouteError() {
  const err = useRouteError();
  const message = isRouteErrorResponse(err) ? `${err.status} ${err.statusText}` : err instanceof Error ? err.message : 'Unknown error';
  return (
    <main className="centered">
      <h1>This page could not be shown</h1>
      <p role="alert">{message}</p>
      <p>
        <Link to="/">Back to the overview</Link> or reload the page.
      </p>
    </main>
  );
}
