import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, ApiError, rememberCsrf } from '../api.ts';
import { can, type Permission } from '../permissions.ts';
import type { ConsoleSession, Mode } from '../types.ts';

export const SESSION_KEY = ['session'] as const;

/** GET /console/api/session; a 401 is an answer (signed out), not an error to retry. */
export function useSessionQuery() {
  return useQuery({
    queryKey: SESSION_KEY,
    queryFn: async () => {
      try {
        const s = await api.get<ConsoleSession>('/session');
        rememberCsrf(s.csrf_token);
        return s;
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) {
          rememberCsrf(null);
          return null;
        }
        throw err;
      }
    },
    staleTime: 60_000,
    retry: false,
  });
}

const SessionContext = createContext<ConsoleSession | null>(null);

export function SessionProvider({ session, children }: { session: ConsoleSession; children: ReactNode }) {
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

/** The signed-in person and account (only inside the signed-in shell). */
export function useSession(): ConsoleSession {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside the signed-in shell');
  return s;
}

/** Whether the signed-in person's role may do `permission` (the server checks anyway). */
export function useCan(permission: Permission): boolean {
  return can(useSession().user.role, permission);
}

const MODE_KEY = 'console.mode';
const ModeContext = createContext<{ mode: Mode; setMode: (m: Mode) => void }>({ mode: 'test', setMode: () => {} });

/** The mode last chosen in this browser, or the account's own (live once it has gone live). */
function initialMode(accountMode: string): Mode {
  try {
    const stored = localStorage.getItem(MODE_KEY);
    if (stored === 'live' || stored === 'test') return stored;
  } catch {
    /* no storage: the account's mode */
  }
  return accountMode === 'live' ? 'live' : 'test';
}

/** The test/live switch: which mode's data every page shows, sent as `mode` on every data request. */
export function ModeProvider({ accountMode, children }: { accountMode: string; children: ReactNode }) {
  const [mode, setModeState] = useState<Mode>(() => initialMode(accountMode));
  useEffect(() => {
    document.documentElement.dataset.mode = mode;
  }, [mode]);
  const setMode = (m: Mode) => {
    setModeState(m);
    try {
      localStorage.setItem(MODE_KEY, m);
    } catch {
      /* private browsing: the choice lasts this page */
    }
  };
  return <ModeContext.Provider value={{ mode, setMode }}>{children}</ModeContext.Provider>;
}

export function useMode(): Mode {
  return useContext(ModeContext).mode;
}
export function useSetMode(): (m: Mode) => void {
  return useContext(ModeContext).setMode;
}
