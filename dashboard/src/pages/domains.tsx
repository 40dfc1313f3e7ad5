// The organization's sending domains: the list, add and delete (ADMIN and up); one domain is domain.tsx.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { mayAdmin, orgPath, pageHref, valueIn, when, type PageProps, Head, Outcome, useOutcome } from '../ui.tsx';
import { DomainView, type Domain } from './domain.tsx';

/** The organization's domains; `#/…/domains/<id>` shows one. */
export function Domains(props: PageProps) {
  return props.id ? <DomainView {...props} /> : <DomainList {...props} />;
}

function DomainList({ org, project, role }: PageProps) {
  const path = `${orgPath({ org })}/domains`;
  const admin = mayAdmin(role);
  const [domains, setDomains] = useState<Domain[]>();
  const { notice, error, run } = useOutcome();
  const load = () => api<Domain[]>('GET', path).then(setDomains);
  useEffect(() => void run(async () => void (await load())), [path]);
  /** Runs a change, then shows the list as it now is. */
  const act = (work: () => Promise<string>) =>
    run(async () => {
      const done = await work();
      await load();
      return done;
    });
  function add(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const name = valueIn(form)('name').trim();
    const bind = (form.elements.namedItem('bind') as HTMLInputElement).checked;
    void act(async () => {
      const d = await api<Domain>('POST', path, { name, ...(bind ? { project_id: project } : {}) });
      form.reset();
      location.hash = pageHref(org, project, `domains/${d.id}`);
      return `${d.name} is added: publish its records, then verify.`;
    });
  }
  function remove(d: Domain) {
    if (!confirm(`Delete ${d.name}? Emails from it are refused at once.`)) return;
    void act(async () => {
      await api('DELETE', `${path}/${d.id}`);
      return `${d.name} is deleted.`;
    });
  }
  return (
    <main>
      <h1>Domains</h1>
      {admin && (
        <form class="filters" onSubmit={add}>
          <label>
            Domain name
            <input name="name" required maxLength={253} placeholder="example.com" />
          </label>
          <label class="inline">
            <input name="bind" type="checkbox" checked />
            Send from it in this project
          </label>
          <button type="submit">Add domain</button>
        </form>
      )}
      <Outcome notice={notice} error={error} />
      {domains?.length === 0 && <p>No domain yet.</p>}
      {domains && domains.length > 0 && (
        <table>
          <Head cols={['Domain', 'Status', 'This project', 'Last checked (UTC)']} actions={admin} />
          <tbody>
            {domains.map((d) => (
              <tr>
                <td>
                  <a href={pageHref(org, project, `domains/${d.id}`)}>{d.name}</a>
                </td>
                <td class={`status status-${d.status.toLowerCase()}`}>{d.status}</td>
                <td>{d.project_ids.includes(project) ? 'sends from it' : 'not bound'}</td>
                <td>{d.last_checked_at ? when(d.last_checked_at) : 'never'}</td>
                {admin && (
                  <td>
                    <button type="button" class="secondary" onClick={() => remove(d)}>
                      Delete <span class="visually-hidden">{d.name}</span>
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
