import { useEffect, useState } from 'react';
import { NavLink, Navigate, Outlet, useLocation, useNavigate } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import { Button, Label, Menu, MenuItem, MenuTrigger, Popover, Switch } from 'react-aria-components';
import { api } from '../api.ts';
import { can } from '../permissions.ts';
import { ROUTES } from '../routes.ts';
import { ErrorNote, Loading } from '../ui/Page.tsx';
import { ModeProvider, SessionProvider, useMode, useSession, useSessionQuery, useSetMode } from './session.tsx';

const GROUPS = ['Account', 'Data', 'Developers', 'Settings'] as const;

/** Pages a person whose account requires two-factor may open before turning it on. */
const TWO_FACTOR_SETUP_PATH = '/settings/security';

/** The signed-in frame: the session or a redirect to sign-in, then the layout. */
export function Shell() {
  const session = useSessionQuery();
  const location = useLocation();
  if (session.isPending) return <Loading what="Opening the console" />;
  if (session.error) return <ErrorNote error={session.error} />;
  if (!session.data) {
    const next = location.pathname + location.search;
    return <Navigate to={`/sign-in${next && next !== '/' ? `?next=${encodeURIComponent(next)}` : ''}`} replace />;
  }
  const s = session.data;
  if (s.account.require_two_factor && !s.user.two_factor_enabled && location.pathname !== TWO_FACTOR_SETUP_PATH) {
    return <Navigate to={TWO_FACTOR_SETUP_PATH} replace />;
  }
  return (
    <SessionProvider session={s}>
      <ModeProvider accountMode={s.account.mode}>
        <Layout />
      </ModeProvider>
    </SessionProvider>
  );
}

function ModeSwitch() {
  const mode = useMode();
  const setMode = useSetMode();
  const queryClient = useQueryClient();
  return (
    <Switch
      className="mode-switch"
      isSelected={mode === 'test'}
      onChange={(test) => {
        setMode(test ? 'test' : 'live');
        void queryClient.invalidateQueries();
      }}
    >
      <div className="mode-switch-track" aria-hidden="true">
        <span className="mode-switch-thumb" />
      </div>
      <Label className="mode-switch-label">Test mode</Label>
    </Switch>
  );
}

function UserMenu() {
  const { user } = useSession();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  return (
    <MenuTrigger>
      <Button className="button button-plain user-button">
        <span className="user-initial" aria-hidden="true">
          {(user.name || user.email).charAt(0).toUpperCase()}
        </span>
        <span className="user-email">
          <span className="visually-hidden">Account menu for </span>
          {user.email}
        </span>
      </Button>
      <Popover className="popover" placement="bottom end">
        <Menu
          className="menu"
          onAction={async (key) => {
            if (key === 'security') navigate('/settings/security');
            if (key === 'sign-out') {
              await api.post('/sign_out').catch(() => {});
              queryClient.clear();
              navigate('/sign-in', { replace: true });
            }
          }}
        >
          <MenuItem className="menu-item" id="security">
            Your security
          </MenuItem>
          <MenuItem className="menu-item" id="sign-out">
            Sign out
          </MenuItem>
        </Menu>
      </Popover>
    </MenuTrigger>
  );
}

function Layout() {
  const { account, user } = useSession();
  const mode = useMode();
  const location = useLocation();
  const [navOpen, setNavOpen] = useState(false);
  useEffect(() => setNavOpen(false), [location.pathname]);
  const visible = ROUTES.filter((r) => r.nav && (!r.permission || can(user.role, r.permission)) && (!r.testOnly || mode === 'test'));
  return (
    <div className={`shell mode-${mode}`}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      {mode === 'test' ? (
        <div className="mode-banner" role="note">
          Test mode: test data only. Nothing here calls real people or moves real money.
        </div>
      ) : account.mode !== 'live' ? (
        <div className="mode-banner mode-banner-live" role="note">
          Live mode: your account is not live yet, so there is no live data. Finish “Going live” first.
        </div>
      ) : null}
      <header className="topbar">
        <button type="button" className="button button-plain nav-toggle" aria-expanded={navOpen} aria-controls="sidenav" onClick={() => setNavOpen(!navOpen)}>
          Menu
        </button>
        <span className="account-name" title={account.name}>
          {account.name}
        </span>
        <div className="topbar-end">
          <ModeSwitch />
          <UserMenu />
        </div>
      </header>
      <div className="frame">
        <nav id="sidenav" aria-label="Console" className={`sidenav${navOpen ? ' open' : ''}`}>
          {GROUPS.map((group) => {
            const items = visible.filter((r) => r.nav!.group === group);
            if (!items.length) return null;
            return (
              <div key={group} className="nav-group">
                <p className="nav-group-title">{group}</p>
                <ul>
                  {items.map((r) => (
                    <li key={r.path}>
                      <NavLink to={`/${r.path}`} end={r.path === ''} className="nav-link">
                        {r.nav!.label}
                      </NavLink>
                    </li>
                  ))}
                </ul>
              </div>
            );
          })}
        </nav>
        <main id="main" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}
