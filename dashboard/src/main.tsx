// The dashboard: a small client over the management API (docs/decisions.md, "The web
// dashboard"). Hash routes, so the server serves one page: #/ signs in, then
// #/o/<org>/p/<project>/<page>[/<id>] shows a page of pages.ts, and #/invitations/<token> accepts an
// invitation. Every rule (who may see what) is the server's; the page only asks.
import { options, render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, resume, signOut } from './api.ts';
import { PAGES } from './pages.ts';
import { AcceptInvitation } from './pages/accept.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { emailsHref, pageHref, useHash, type Org, type Project } from './ui.tsx';

// Effects only start requests, so they run as soon as the render's task ends rather than after
// the next animation frame, which a background tab never gives and a headless browser gives only
// after Preact's 100 ms fallback: each page load asked for its data ~100 ms late.
options.requestAnimationFrame = (flush) => void setTimeout(flush);

type Route =
  | { page: 'home' }
  | { page: 'invitation'; token: string }
  | { page: string; org: string; project: string; id: string; query: URLSearchParams };

function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?');
  const inv = /^\/invitations\/([^/]+)$/.exec(path);
  if (inv) return { page: 'invitation', token: decodeURIComponent(inv[1] ?? '') };
  const m = /^\/o\/([^/]+)\/p\/([^/]+)\/([a-z-]+)(?:\/([^/]+))?$/.exec(path);
  if (!m || !PAGES.some((p) => p.name === m[3])) return { page: 'home' };
  const [, org = '', project = '', page = '', id = ''] = m;
  return { page, org, project, id: decodeURIComponent(id), query: new URLSearchParams(search) };
}

/** The organization and project switcher, the pages the role may use, and sign-out. */
function Header(props: { orgs: Org[]; org: string; project: string; page: string; onSignOut: () => void }) {
  const { orgs, org, project, page, onSignOut } = props;
  const role = orgs.find((o) => o.id === org)?.role;
  const [projects, setProjects] = useState<Project[]>([]);
  useEffect(() => void api<Project[]>('GET', `/v1/organizations/${org}/projects`).then(setProjects), [org]);
  async function switchOrg(id: string) {
    const list = await api<Project[]>('GET', `/v1/organizations/${id}/projects`);
    if (list[0]) location.hash = emailsHref(id, list[0].id);
  }
  return (
    <header>
      <strong>svc</strong>
      <label>
        Organization
        <select value={org} onChange={(e) => void switchOrg(e.currentTarget.value)}>
          {orgs.map((o) => (
            <option value={o.id}>{o.name}</option>
          ))}
        </select>
      </label>
      <label>
        Project
        <select value={project} onChange={(e) => (location.hash = pageHref(org, e.currentTarget.value, page))}>
          {projects.map((p) => (
            <option value={p.id}>{p.name}</option>
          ))}
        </select>
      </label>
      <nav aria-label="Pages">
        {PAGES.filter((p) => p.shown(role)).map((p) => (
          <a href={pageHref(org, project, p.name)} aria-current={p.name === page ? 'page' : undefined}>
            {p.label}
          </a>
        ))}
      </nav>
      <button type="button" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}

function App() {
  const hash = useHash();
  const [signedIn, setSignedIn] = useState<boolean>();
  const [orgs, setOrgs] = useState<Org[]>([]);
  useEffect(() => void resume().then(setSignedIn), []);
  useEffect(() => {
    if (signedIn) void api<Org[]>('GET', '/v1/organizations').then(setOrgs);
  }, [signedIn]);
  const route = parseRoute(hash);

  useEffect(() => {
    if (!signedIn || route.page !== 'home') return;
    // Home: the first project of the first organization.
    void (async () => {
      const orgs = await api<Org[]>('GET', '/v1/organizations');
      for (const o of orgs) {
        const projects = await api<Project[]>('GET', `/v1/organizations/${o.id}/projects`).catch((e: unknown) => {
          if (e instanceof ApiError && e.status === 403) return [];
          throw e;
        });
        if (projects[0]) return void (location.hash = emailsHref(o.id, projects[0].id));
      }
    })();
  }, [signedIn, route.page]);

  if ('token' in route)
    return (
      <AcceptInvitation
        token={route.token}
        onSignedIn={() => {
          setSignedIn(true);
          location.hash = '#/';
        }}
      />
    );
  if (signedIn === undefined) return <main aria-busy="true" />;
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const out = () => void signOut().then(() => setSignedIn(false));
  if (!('org' in route)) return <main aria-busy="true" />;
  const View = PAGES.find((p) => p.name === route.page)!.view;
  const role = orgs.find((o) => o.id === route.org)?.role;
  return (
    <>
      <Header orgs={orgs} org={route.org} project={route.project} page={route.page} onSignOut={out} />
      <View org={route.org} project={route.project} id={route.id} query={route.query} role={role} />
    </>
  );
}

render(<App />, document.getElementById('app')!);
