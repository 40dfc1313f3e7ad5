// The project's emails: the list (filters, cursor paging, live first page, CSV export).
import { useEffect, useState } from 'preact/hooks';
import { api, download } from '../api.ts';
import { Head, emailsHref, ErrorLine, mayWrite, messageOf, projectPath, save, when, type PageProps } from '../ui.tsx';
import { EmailView } from './email.tsx';

export interface EmailItem {
  id: string;
  from_email: string;
  to_emails: string[];
  subject: string;
  status: string;
  tags: string[];
  created_at: string;
  source?: string | null;
}

/** A key of the project as the key filter names it. */
interface KeyOption {
  id: string;
  name: string;
  prefix: string;
  revoked_at: string | null;
}

const STATUSES = ['QUEUED', 'SENDING', 'SENT', 'DELIVERED', 'BOUNCED', 'FAILED', 'COMPLAINED', 'SIMULATED', 'CANCELED'];
/** How an email came in (the contract's EmailSource). */
const SOURCES = ['API', 'SMTP', 'CAMPAIGN'];
/** How often the first page of the list looks for new emails while it is open. */
const LIVE_MS = 5000;

/**
 * The project's keys, revoked ones too (their emails stay), for a DEVELOPER and up: only they may
 * list keys, so a VIEWER gets no key filter.
 */
function useKeyOptions(props: PageProps): KeyOption[] | undefined {
  const [keys, setKeys] = useState<KeyOption[]>();
  const allowed = mayWrite(props.role);
  const path = `${projectPath(props)}/api-keys?include_revoked=true`;
  useEffect(() => {
    setKeys(undefined);
    // Without the keys the form has no key filter; the list does not depend on them.
    if (allowed) void api<KeyOption[]>('GET', path).then(setKeys, () => setKeys(undefined));
  }, [path, allowed]);
  return keys;
}

function Emails(props: PageProps) {
  const { org, project, query } = props;
  const [emails, setEmails] = useState<EmailItem[]>();
  const [error, setError] = useState<string>();
  const keys = useKeyOptions(props);
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
      {/* The fields hold what the user types: a list arriving (every few seconds) leaves them be, and
          a new search, which changes the query, starts the form again from it. */}
      <form class="filters" onSubmit={search} role="search" key={key}>
        <label>
          Recipient
          <input name="to_email" type="search" defaultValue={query.get('to_email') ?? ''} />
        </label>
        <label>
          Subject
          <input name="subject" type="search" defaultValue={query.get('subject') ?? ''} />
        </label>
        <label>
          Sender
          <input name="from_email" type="search" defaultValue={query.get('from_email') ?? ''} />
        </label>
        <label>
          Status
          <select name="status">
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option value={s} selected={query.get('status') === s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Source
          <select name="source">
            <option value="">any</option>
            {SOURCES.map((s) => (
              <option value={s} selected={query.get('source') === s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        {keys && (
          <label>
            API key
            <select name="api_key_id">
              <option value="">any</option>
              {keys.map((k) => (
                <option value={k.id} selected={query.get('api_key_id') === k.id}>
                  {k.name} ({k.prefix}){k.revoked_at ? ', revoked' : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Tag
          <input name="tag" defaultValue={query.get('tag') ?? ''} />
        </label>
        <label>
          From
          <input name="from" type="datetime-local" defaultValue={local('from')} />
        </label>
        <label>
          To
          <input name="to" type="datetime-local" defaultValue={local('to')} />
        </label>
        <button type="submit">Search</button>
        <button type="button" class="secondary" onClick={() => void exportCsv()}>
          Export CSV
        </button>
      </form>
      <ErrorLine error={error} />
      {emails && emails.length === 0 && <p>No email matches.</p>}
      {emails && emails.length > 0 && (
        <div class="table-scroll">
          <table>
            <Head cols={['Created (UTC)', 'To', 'Subject', 'Status', 'Source', 'Tags']} />
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
                  <td>{e.source ?? 'API'}</td>
                  <td>{e.tags.join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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

/** The list, or one email when the route names it. */
export const EmailsPage = (props: PageProps) => (props.id ? <EmailView {...props} /> : <Emails {...props} />);
