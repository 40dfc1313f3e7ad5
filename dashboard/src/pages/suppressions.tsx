// The project's suppression list.
import { useEffect, useState } from 'preact/hooks';
import { api, CsvBody, download } from '../api.ts';
import { ErrorLine, messageOf, mayWrite, save, valueIn, when, type PageProps } from '../ui.tsx';

interface Suppression {
  email: string;
  reason: string;
  created_at: string;
}
const REASONS = ['MANUAL', 'HARD_BOUNCE', 'COMPLAINT', 'UNSUBSCRIBE'];
/** Addresses per page of the suppression list. */
const SUPPRESSIONS_PAGE = 100;

/** The project's suppression list, in address order: add, remove, import and export CSV. */
export function Suppressions({ org, project, query, role }: PageProps) {
  const after = query.get('after') ?? '';
  const path = `/v1/organizations/${org}/projects/${project}/suppressions`;
  const writer = mayWrite(role);
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
