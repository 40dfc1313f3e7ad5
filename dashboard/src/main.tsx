// The dashboard: a small client over the management API (docs/decisions.md, "The web
// dashboard"). Hash routes, so the server serves one page: #/ signs in, then
// #/o/<org>/p/<project>/emails lists the project's emails and #/o/<org>/p/<project>/emails/<id>
// shows one. Every rule (who may see what) is the server's; the page only asks.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, CsvBody, download, resume, signIn, signOut } from './api.ts';

type Role = 'VIEWER' | 'DEVELOPER' | 'ADMIN' | 'OWNER';
interface Org {
  id: string;
  name: string;
  role: Role;
}
/** The roles that may write what a page offers (resend: DEVELOPER and up); the server checks again. */
const WRITERS: readonly Role[] = ['DEVELOPER', 'ADMIN', 'OWNER'];
interface Project {
  id: string;
  name: string;
}
interface EmailItem {
  id: string;
  from_email: string;
  to_emails: string[];
  subject: string;
  status: string;
  tags: string[];
  created_at: string;
}
interface EmailEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  timestamp: string;
}
interface EmailDetail extends EmailItem {
  cc_emails: string[] | null;
  bcc_emails: string[] | null;
  text_body: string | null;
  html_body: string | null;
  headers: Record<string, string>;
  events: EmailEvent[];
}

interface Suppression {
  email: string;
  reason: string;
  created_at: string;
}
const REASONS = ['MANUAL', 'HARD_BOUNCE', 'COMPLAINT', 'UNSUBSCRIBE'];
/** Addresses per page of the suppression list. */
const SUPPRESSIONS_PAGE = 100;

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  permissions: string;
  env: string;
  last_used_at: string | null;
  created_at: string;
  key?: string;
}

const STATUSES = ['QUEUED', 'SENDING', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED', 'COMPLAINED', 'SIMULATED'];
/** How often the first page of the list looks for new emails while it is open. */
const LIVE_MS = 5000;

type Route =
  | { page: 'home' }
  | { page: 'emails'; org: string; project: string; query: URLSearchParams }
  | { page: 'email'; org: string; project: string; id: string }
  | { page: 'keys'; org: string; project: string }
  | { page: 'suppressions'; org: string; project: string; after: string };

function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?');
  const k = /^\/o\/([^/]+)\/p\/([^/]+)\/keys$/.exec(path);
  if (k) return { page: 'keys', org: k[1] ?? '', project: k[2] ?? '' };
  const sup = /^\/o\/([^/]+)\/p\/([^/]+)\/suppressions$/.exec(path);
  if (sup) {
    const after = new URLSearchParams(search).get('after') ?? '';
    return { page: 'suppressions', org: sup[1] ?? '', project: sup[2] ?? '', after };
  }
  const m = /^\/o\/([^/]+)\/p\/([^/]+)\/emails(?:\/([^/]+))?$/.exec(path);
  if (!m) return { page: 'home' };
  const [, org = '', project = '', id] = m;
  return id
    ? { page: 'email', org, project, id }
    : { page: 'emails', org, project, query: new URLSearchParams(search) };
}

const emailsHref = (org: string, project: string, query?: URLSearchParams) =>
  `#/o/${org}/p/${project}/emails${query && query.size ? `?${query.toString()}` : ''}`;
const when = (iso: string) => iso.replace('T', ' ').slice(0, 19);
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The value of a form's control by name. */
const valueIn = (form: HTMLFormElement) => (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value;

/** What the API answered when a request failed, read out to screen readers. */
function ErrorLine({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  async function submit(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const field = valueIn(form);
    setBusy(true);
    try {
      await signIn(field('email'), field('password'));
      onSignedIn();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <main class="signin">
      <h1>svc</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <ErrorLine error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}

/** The organization and project switcher, and sign-out. */
function Header(props: { orgs: Org[]; org: string; project: string; onSignOut: () => void }) {
  const { orgs, org, project, onSignOut } = props;
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
        <select value={project} onChange={(e) => (location.hash = emailsHref(org, e.currentTarget.value))}>
          {projects.map((p) => (
            <option value={p.id}>{p.name}</option>
          ))}
        </select>
      </label>
      <nav aria-label="Project">
        <a href={emailsHref(org, project)}>Emails</a>
        <a href={`#/o/${org}/p/${project}/suppressions`}>Suppressions</a>
        {role && WRITERS.includes(role) && <a href={`#/o/${org}/p/${project}/keys`}>API keys</a>}
      </nav>
      <button type="button" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}

function Emails({ org, project, query }: { org: string; project: string; query: URLSearchParams }) {
  const [emails, setEmails] = useState<EmailItem[]>();
  const [error, setError] = useState<string>();
  const key = query.toString();
  useEffect(() => {
    let stop = false;
    const params = new URLSearchParams(query);
    params.set('limit', '50');
    const load = () =>
      api<EmailItem[]>('GET', `/v1/organizations/${org}/projects/${project}/emails?${params.toString()}`).then(
        (list) => !stop && (setEmails(list), setError(undefined)),
        (e: unknown) => !stop && setError(messageOf(e)),
      );
    void load();
    // The newest page follows new emails while it is open; an older page stays as it was.
    const live = query.has('before') || query.has('after') ? undefined : setInterval(() => void load(), LIVE_MS);
    return () => {
      stop = true;
      clearInterval(live);
    };
  }, [org, project, key]);

  function search(e: Event) {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const [name, value] of new FormData(e.currentTarget as HTMLFormElement)) {
      if (typeof value !== 'string' || !value) continue;
      next.set(name, name === 'from' || name === 'to' ? new Date(value).toISOString() : value);
    }
    location.hash = emailsHref(org, project, next);
  }
  const page = (cursor: 'before' | 'after', id: string) => {
    const next = new URLSearchParams(query);
    next.delete('before');
    next.delete('after');
    next.set(cursor, id);
    return emailsHref(org, project, next);
  };
  const local = (name: string) => query.get(name)?.slice(0, 16) ?? '';
  /** Every email the filter matches, as the API's CSV, saved by the browser. */
  async function exportCsv() {
    const params = new URLSearchParams(query);
    params.delete('before');
    params.delete('after');
    params.set('format', 'csv');
    try {
      save(
        await download(`/v1/organizations/${org}/projects/${project}/emails?${params.toString()}`),
        `emails-${project}.csv`,
      );
    } catch (e) {
      setError(messageOf(e));
    }
  }

  return (
    <main>
      <h1>Emails</h1>
      <form class="filters" onSubmit={search} role="search">
        <label>
          Recipient
          <input name="to_email" type="search" value={query.get('to_email') ?? ''} />
        </label>
        <label>
          Sender
          <input name="from_email" type="search" value={query.get('from_email') ?? ''} />
        </label>
        <label>
          Status
          <select name="status" value={query.get('status') ?? ''}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Tag
          <input name="tag" value={query.get('tag') ?? ''} />
        </label>
        <label>
          From
          <input name="from" type="datetime-local" value={local('from')} />
        </label>
        <label>
          To
          <input name="to" type="datetime-local" value={local('to')} />
        </label>
        <button type="submit">Search</button>
        <button type="button" class="secondary" onClick={() => void exportCsv()}>
          Export CSV
        </button>
      </form>
      <ErrorLine error={error} />
      {emails && emails.length === 0 && <p>No email matches.</p>}
      {emails && emails.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Created (UTC)</th>
              <th scope="col">To</th>
              <th scope="col">Subject</th>
              <th scope="col">Status</th>
              <th scope="col">Tags</th>
            </tr>
          </thead>
          <tbody>
            {emails.map((e) => (
              <tr>
                <td>{when(e.created_at)}</td>
                <td>{e.to_emails.join(', ')}</td>
                <td>
                  <a href={`#/o/${org}/p/${project}/emails/${e.id}`}>{e.subject || '(no subject)'}</a>
                </td>
                <td>
                  <span class={`status status-${e.status.toLowerCase()}`}>{e.status}</span>
                </td>
                <td>{e.tags.join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {emails && emails.length > 0 && (
        <nav class="pages" aria-label="Pages">
          {(query.has('before') || query.has('after')) && <a href={page('after', emails[0]!.id)}>Newer</a>}
          {emails.length === 50 && <a href={page('before', emails[emails.length - 1]!.id)}>Older</a>}
        </nav>
      )}
    </main>
  );
}

function EmailView({ org, project, id, role }: { org: string; project: string; id: string; role: Role | undefined }) {
  const [email, setEmail] = useState<EmailDetail>();
  const [error, setError] = useState<string>();
  async function resend() {
    try {
      const sent = await api<{ id: string }>(
        'POST',
        `/v1/organizations/${org}/projects/${project}/emails/${id}/resend`,
      );
      location.hash = `#/o/${org}/p/${project}/emails/${sent.id}`;
    } catch (e) {
      setError(messageOf(e));
    }
  }
  useEffect(() => {
    api<EmailDetail>('GET', `/v1/organizations/${org}/projects/${project}/emails/${id}`).then(setEmail, (e: unknown) =>
      setError(messageOf(e)),
    );
  }, [org, project, id]);
  if (error)
    return (
      <main>
        <ErrorLine error={error} />
      </main>
    );
  if (!email) return <main aria-busy="true" />;
  return (
    <main>
      <p>
        <a href={emailsHref(org, project)}>← Emails</a>
      </p>
      <h1>{email.subject || '(no subject)'}</h1>
      {role && WRITERS.includes(role) && (
        <p>
          <button type="button" onClick={() => void resend()}>
            Resend
          </button>
        </p>
      )}
      <dl class="fields">
        <dt>Status</dt>
        <dd>
          <span class={`status status-${email.status.toLowerCase()}`}>{email.status}</span>
        </dd>
        <dt>From</dt>
        <dd>{email.from_email}</dd>
        <dt>To</dt>
        <dd>{email.to_emails.join(', ')}</dd>
        {email.cc_emails?.length ? (
          <>
            <dt>Cc</dt>
            <dd>{email.cc_emails.join(', ')}</dd>
          </>
        ) : null}
        <dt>Created (UTC)</dt>
        <dd>{when(email.created_at)}</dd>
        <dt>Id</dt>
        <dd>
          <code>{email.id}</code>
        </dd>
      </dl>
      <h2>Events</h2>
      <ol class="events">
        {email.events.map((ev) => (
          <li>
            <strong>{ev.type}</strong> <time dateTime={ev.timestamp}>{when(ev.timestamp)}</time>
            {Object.keys(ev.data).length > 0 && (
              <dl>
                {Object.entries(ev.data).map(([k, v]) => (
                  <>
                    <dt>{k}</dt>
                    <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
                  </>
                ))}
              </dl>
            )}
          </li>
        ))}
      </ol>
      {email.html_body !== null && (
        <>
          <h2>HTML</h2>
          {/* No scripts, no same origin: the email cannot reach the dashboard or its session. */}
          <iframe class="preview" title="HTML part" sandbox="" srcdoc={email.html_body} />
        </>
      )}
      {email.text_body !== null && (
        <>
          <h2>Text</h2>
          <pre class="text">{email.text_body}</pre>
        </>
      )}
    </main>
  );
}

/** The project's API keys: created with the key shown once, listed by prefix, revoked. */
function Keys({ org, project }: { org: string; project: string }) {
  const path = `/v1/organizations/${org}/projects/${project}/api-keys`;
  const [keys, setKeys] = useState<ApiKey[]>();
  const [created, setCreated] = useState<ApiKey>();
  const [error, setError] = useState<string>();
  const load = () => api<ApiKey[]>('GET', path).then(setKeys, (e: unknown) => setError(messageOf(e)));
  useEffect(() => void load(), [path]);
  async function create(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const field = valueIn(form);
    try {
      setCreated(
        await api<ApiKey>('POST', path, { name: field('name'), env: field('env'), permissions: field('permissions') }),
      );
      setError(undefined);
      form.reset();
      await load();
    } catch (err) {
      setError(messageOf(err));
    }
  }
  async function revoke(k: ApiKey) {
    if (!confirm(`Revoke ${k.name}? Requests with it fail at once.`)) return;
    try {
      await api('DELETE', `${path}/${k.id}`);
      await load();
    } catch (err) {
      setError(messageOf(err));
    }
  }
  return (
    <main>
      <h1>API keys</h1>
      <form class="filters" onSubmit={(e) => void create(e)}>
        <label>
          Name
          <input name="name" required maxLength={100} />
        </label>
        <label>
          Environment
          <select name="env">
            <option value="LIVE">LIVE</option>
            <option value="TEST">TEST</option>
          </select>
        </label>
        <label>
          Permissions
          <select name="permissions">
            <option value="FULL_ACCESS">FULL_ACCESS</option>
            <option value="SENDING_ONLY">SENDING_ONLY</option>
            <option value="READ_ONLY">READ_ONLY</option>
          </select>
        </label>
        <button type="submit">Create key</button>
      </form>
      {created?.key && (
        <div class="notice" role="status">
          <p>
            The key <strong>{created.name}</strong>, shown this once: copy it now.
          </p>
          <code class="secret">{created.key}</code>
        </div>
      )}
      <ErrorLine error={error} />
      {keys && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Environment</th>
              <th scope="col">Permissions</th>
              <th scope="col">Last used (UTC)</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr>
                <td>{k.name}</td>
                <td>
                  <code>{k.prefix}…</code>
                </td>
                <td>{k.env}</td>
                <td>{k.permissions}</td>
                <td>{k.last_used_at ? when(k.last_used_at) : 'never'}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => void revoke(k)}>
                    Revoke <span class="visually-hidden">{k.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}

/** Saves `blob` as `name` through the browser. */
function save(blob: Blob, name: string): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

/** The project's suppression list, in address order: add, remove, import and export CSV. */
function Suppressions(props: { org: string; project: string; after: string; role: Role | undefined }) {
  const { org, project, after, role } = props;
  const path = `/v1/organizations/${org}/projects/${project}/suppressions`;
  const writer = role !== undefined && WRITERS.includes(role);
  const [rows, setRows] = useState<Suppression[]>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const pageOf = (from: string) =>
    `#/o/${org}/p/${project}/suppressions${from ? `?after=${encodeURIComponent(from)}` : ''}`;
  const load = () =>
    api<Suppression[]>('GET', `${path}?limit=${SUPPRESSIONS_PAGE}&after=${encodeURIComponent(after)}`).then(
      setRows,
      (e: unknown) => setError(messageOf(e)),
    );
  useEffect(() => void load(), [path, after]);
  async function act(work: () => Promise<string | undefined>) {
    try {
      setNotice(await work());
      setError(undefined);
      await load();
    } catch (e) {
      setError(messageOf(e));
    }
  }
  function add(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const field = valueIn(form);
    void act(async () => {
      await api('POST', path, { email: field('email'), reason: field('reason') });
      const added = field('email');
      form.reset();
      return `${added} is suppressed.`;
    });
  }
  function importFile(e: Event) {
    const input = e.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    void act(async () => {
      const r = await api<{ imported: number; invalid: { line: number; email: string; message: string }[] }>(
        'POST',
        `${path}/import`,
        new CsvBody(await file.text()),
      );
      input.value = '';
      const refused = r.invalid.map((x) => `line ${x.line} (${x.email}): ${x.message}`).join('; ');
      return `Imported ${r.imported}.${refused ? ` Refused: ${refused}` : ''}`;
    });
  }
  return (
    <main>
      <h1>Suppressions</h1>
      {writer && (
        <form class="filters" onSubmit={add}>
          <label>
            Address
            <input name="email" type="email" required />
          </label>
          <label>
            Reason
            <select name="reason">
              {REASONS.map((r) => (
                <option value={r}>{r}</option>
              ))}
            </select>
          </label>
          <button type="submit">Suppress</button>
          <label>
            Import CSV (email[,reason])
            <input type="file" accept=".csv,text/csv" onChange={importFile} />
          </label>
        </form>
      )}
      <p>
        <button
          type="button"
          class="secondary"
          onClick={() =>
            void act(async () => {
              save(await download(`${path}?format=csv`), `suppressions-${project}.csv`);
              return undefined;
            })
          }
        >
          Export CSV
        </button>
      </p>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <ErrorLine error={error} />
      {rows && rows.length === 0 && <p>No address is suppressed{after ? ' after this one' : ''}.</p>}
      {rows && rows.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Address</th>
              <th scope="col">Reason</th>
              <th scope="col">Since (UTC)</th>
              {writer && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr>
                <td>{r.email}</td>
                <td>{r.reason}</td>
                <td>{when(r.created_at)}</td>
                {writer && (
                  <td>
                    <button
                      type="button"
                      class="secondary"
                      onClick={() =>
                        void act(async () => {
                          await api('DELETE', `${path}/${encodeURIComponent(r.email)}`);
                          return `${r.email} may be sent to again.`;
                        })
                      }
                    >
                      Remove <span class="visually-hidden">{r.email}</span>
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pages" aria-label="Pages">
        {after && <a href={pageOf('')}>First</a>}
        {rows?.length === SUPPRESSIONS_PAGE && <a href={pageOf(rows[rows.length - 1]!.email)}>Next</a>}
      </nav>
    </main>
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

  if (signedIn === undefined) return <main aria-busy="true" />;
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const out = () => void signOut().then(() => setSignedIn(false));
  if (route.page === 'home') return <main aria-busy="true" />;
  return (
    <>
      <Header orgs={orgs} org={route.org} project={route.project} onSignOut={out} />
      {route.page === 'keys' ? (
        <Keys org={route.org} project={route.project} />
      ) : route.page === 'suppressions' ? (
        <Suppressions
          org={route.org}
          project={route.project}
          after={route.after}
          role={orgs.find((o) => o.id === route.org)?.role}
        />
      ) : route.page === 'emails' ? (
        <Emails org={route.org} project={route.project} query={route.query} />
      ) : (
        <EmailView
          org={route.org}
          project={route.project}
          id={route.id}
          role={orgs.find((o) => o.id === route.org)?.role}
        />
      )}
    </>
  );
}

render(<App />, document.getElementById('app')!);
