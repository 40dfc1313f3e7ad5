// The project's suppression list.
import { useEffect, useState } from 'preact/hooks';
import { api, CsvBody, download } from '../api.ts';
import { Head, ErrorLine, messageOf, mayWrite, pageHref, save, valueIn, when, type PageProps } from '../ui.tsx';

interface Suppression {
  email: string;
  reason: string;
  created_at: string;
}
const REASONS = ['MANUAL', 'HARD_BOUNCE', 'COMPLAINT', 'UNSUBSCRIBE'];
/** Addresses per page of the suppression list. */
const SUPPRESSIONS_PAGE = 100;

/** The project's suppression list, in address order: search, add, remove, import and export CSV. */
export function Suppressions({ org, project, query, role }: PageProps) {
  const after = query.get('after') ?? '';
  // The search (q: text in the address; reason), kept in the route so paging and export follow it.
  const search = new URLSearchParams();
  for (const k of ['q', 'reason']) if (query.get(k)) search.set(k, query.get(k)!);
  const path = `/v1/organizations/${org}/projects/${project}/suppressions`;
  const writer = mayWrite(role);
  const [rows, setRows] = useState<Suppression[]>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const pageOf = (from: string, within = search) => {
    const q = new URLSearchParams(within);
    if (from) q.set('after', from);
    return pageHref(org, project, 'suppressions', q);
  };
  const load = () => {
    const q = new URLSearchParams(search);
    q.set('limit', String(SUPPRESSIONS_PAGE));
    q.set('after', after);
    return api<Suppression[]>('GET', `${path}?${q.toString()}`).then(setRows, (e: unknown) => setError(messageOf(e)));
  };
  useEffect(() => void load(), [path, after, search.toString()]);
  function find(e: Event) {
    e.preventDefault();
    const field = valueIn(e.currentTarget as HTMLFormElement);
    const next = new URLSearchParams();
    if (field('q').trim()) next.set('q', field('q').trim());
    if (field('reason')) next.set('reason', field('reason'));
    location.hash = pageOf('', next);
  }
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
      <form class="filters" role="search" onSubmit={find}>
        <label>
          Search the list
          <input name="q" type="search" value={search.get('q') ?? ''} />
        </label>
        <label>
          With reason
          <select name="reason" value={search.get('reason') ?? ''}>
            <option value="">Any</option>
            {REASONS.map((r) => (
              <option value={r}>{r}</option>
            ))}
          </select>
        </label>
        <button type="submit">Search</button>
        {search.size > 0 && <a href={pageOf('', new URLSearchParams())}>Clear</a>}
      </form>
      <p>
        <button
          type="button"
          class="secondary"
          onClick={() =>
            void act(async () => {
              const q = new URLSearchParams(search);
              q.set('format', 'csv');
              save(await download(`${path}?${q.toString()}`), `suppressions-${project}.csv`);
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
      {rows && rows.length === 0 && (
        <p>
          No address {search.size ? 'matches' : 'is suppressed'}
          {after ? ' after this one' : ''}.
        </p>
      )}
      {rows && rows.length > 0 && (
        <table>
          <Head cols={['Address', 'Reason', 'Since (UTC)']} actions={writer} />
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
