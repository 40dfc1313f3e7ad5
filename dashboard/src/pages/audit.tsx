// The organization's audit log (ADMIN and up; the header links no one else to it, and the API
// refuses them): newest first, paged, with each change's before and after, and CSV export.
import { useEffect, useState } from 'preact/hooks';
import { api, download } from '../api.ts';
import { Head, ErrorLine, messageOf, orgPath, pageHref, save, when, type PageProps } from '../ui.tsx';

interface AuditEntry {
  id: string;
  project_id: string | null;
  actor: { type: 'user' | 'cli'; id: string | null; name: string | null; ip: string | null };
  action: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
  created_at: string;
}
/** Entries per page of the log (the API's default). */
const AUDIT_PAGE = 50;

export function AuditLog({ org, project, query }: PageProps) {
  // The API pages by the entry before which to start; the route keeps it, so Back works.
  const before = query.get('before') ?? '';
  const path = `${orgPath({ org })}/audit-logs`;
  const [rows, setRows] = useState<AuditEntry[]>();
  const [error, setError] = useState<string>();
  const pageOf = (from: string) =>
    pageHref(org, project, 'audit', from ? new URLSearchParams({ before: from }) : undefined);
  useEffect(() => {
    const q = new URLSearchParams({ limit: String(AUDIT_PAGE) });
    if (before) q.set('before', before);
    void api<AuditEntry[]>('GET', `${path}?${q.toString()}`).then(setRows, (e: unknown) => setError(messageOf(e)));
  }, [path, before]);
  async function exportCsv() {
    try {
      save(await download(`${path}?format=csv`), `audit-log-${org}.csv`);
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  }
  return (
    <main>
      <h1>Audit log</h1>
      <p>
        <button type="button" class="secondary" onClick={() => void exportCsv()}>
          Export CSV
        </button>
      </p>
      <ErrorLine error={error} />
      {rows && rows.length === 0 && <p>No change is recorded{before ? ' before this one' : ''}.</p>}
      {rows && rows.length > 0 && (
        <div class="scroll">
          <table class="audit">
            <Head cols={['When (UTC)', 'Who', 'Action', 'Target', 'Change']} />
            <tbody>
              {rows.map((r) => (
                <tr>
                  <td>{when(r.created_at)}</td>
                  <td>
                    {r.actor.name ?? r.actor.id ?? 'unknown'}
                    {r.actor.type === 'cli' ? ' (CLI)' : r.actor.ip ? ` from ${r.actor.ip}` : ''}
                  </td>
                  <td>{r.action}</td>
                  <td>
                    {r.target_type} <code>{r.target_id}</code>
                  </td>
                  <td>
                    <Change before={r.before} after={r.after} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pages" aria-label="Pages of the log">
        {before && <a href={pageOf('')}>Newest</a>}
        {rows?.length === AUDIT_PAGE && <a href={pageOf(rows[rows.length - 1]!.id)}>Older</a>}
      </nav>
    </main>
  );
}

/** What a change was and became, as JSON, folded away. */
function Change({ before, after }: { before: unknown; after: unknown }) {
  if (before === null && after === null) return null;
  const json = (v: unknown) => (v === null ? 'none' : JSON.stringify(v, null, 2));
  return (
    <details>
      <summary>Before and after</summary>
      <dl class="change">
        <dt>Before</dt>
        <dd>
          <pre>{json(before)}</pre>
        </dd>
        <dt>After</dt>
        <dd>
          <pre>{json(after)}</pre>
        </dd>
      </dl>
    </details>
  );
}
