import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider, type RouteObject } from 'react-router';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ApiError, rememberCsrf } from './api.ts';
import { SESSION_KEY } from './app/session.tsx';
import { ROUTES, type PageRoute } from './routes.ts';
import { Shell } from './app/Shell.tsx';
import { RouteError } from './app/RouteError.tsx';
import { Loading } from './ui/Page.tsx';
import './styles.css';

/** A session that ended (expired, revoked, signed out elsewhere): back to the sign-in page, whatever asked. */
function onError(err: unknown): void {
  if (err instanceof ApiError && err.status === 401 && err.code === 'console_session_required') {
    rememberCsrf(null);
    queryClient.setQueryData(SESSION_KEY, null);
  }
}

const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    queries: {
      // A page shows what it had at once and asks again each time it is opened.
      staleTime: 0,
      refetchOnWindowFocus: false,
      // A 4xx will not change by asking again.
      retry: (count, err) => !(err instanceof ApiError && err.status >= 400 && err.status < 500) && count < 2,
    },
  },
});

function route(r: PageRoute): RouteObject {
  const lazy = async () => ({ Component: (await r.load()).default });
  return r.path === '' ? { index: true, lazy } : { path: r.path, lazy };
}

const router = createBrowserRouter(
  [
    ...ROUTES.filter((r) => r.public).map((r) => ({ ...route(r), errorElement: <RouteError /> })),
    {
      path: '/',
      element: <Shell />,
      errorElement: <RouteError />,
      hydrateFallbackElement: <Loading />,
      children: [...ROUTES.filter((r) => !r.public).map(route), { path: '*', lazy: async () => ({ Component: (await import('./pages/NotFound.tsx')).default }) }],
    },
  ],
  { basename: '/console' },
);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
