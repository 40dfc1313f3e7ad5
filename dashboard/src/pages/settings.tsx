// Settings: the project's name and settings (ADMIN and up change them), a new project (ADMIN and
// up), the organization's name (OWNER). Anyone else sees the values, read-only.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import {
  mayAdmin,
  orgPath,
  pageHref,
  projectPath,
  valueIn,
  type PageProps,
  type Project,
  type Role,
  Outcome,
  useOutcome,
} from '../ui.tsx';

interface ProjectWithSettings extends Project {
  settings: Record<string, unknown>;
}
/** The project settings the API knows (src/accounts/schema.ts), with what each does. */
const FLAGS = [
  { key: 'click_tracking', label: 'Track clicks', hint: 'Links in new LIVE emails go through svc to count clicks.' },
  { key: 'open_tracking', label: 'Track opens', hint: 'New LIVE HTML emails carry a pixel to count opens.' },
] as const;

function ProjectSettings(props: { org: string; project: string; admin: boolean }) {
  const path = projectPath(props);
  const [p, setP] = useState<ProjectWithSettings>();
  const { notice, error, run } = useOutcome();
  useEffect(() => void run(async () => void setP(await api<ProjectWithSettings>('GET', path))), [path]);
  function save(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const checked = (k: string) => (form.elements.namedItem(k) as HTMLInputElement).checked;
    const settings = Object.fromEntries(FLAGS.map((f) => [f.key, checked(f.key)]));
    void run(async () => {
      setP(await api<ProjectWithSettings>('PATCH', path, { name: valueIn(form)('name'), settings }));
      return 'The project is saved.';
    });
  }
  return (
    <section aria-labelledby="project-heading">
      <h2 id="project-heading">This project</h2>
      <Outcome notice={notice} error={error} />
      {p && (
        <form class="settings" onSubmit={save}>
          <label>
            Project name
            <input name="name" required maxLength={200} value={p.name} readOnly={!props.admin} />
          </label>
          {FLAGS.map((f) => (
            <label class="inline">
              <input name={f.key} type="checkbox" checked={p.settings[f.key] === true} disabled={!props.admin} />
              {f.label}
              <span class="hint">{f.hint}</span>
            </label>
          ))}
          {props.admin && <button type="submit">Save the project</button>}
        </form>
      )}
    </section>
  );
}

function NewProject({ org }: { org: string }) {
  const { notice, error, run } = useOutcome();
  function create(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      const p = await api<Project>('POST', `${orgPath({ org })}/projects`, { name: valueIn(form)('name') });
      // The header's project switcher lists projects as it loaded them: load the page anew on the new one.
      location.hash = pageHref(org, p.id, 'settings');
      location.reload();
      return `${p.name} is created.`;
    });
  }
  return (
    <section aria-labelledby="new-project-heading">
      <h2 id="new-project-heading">New project</h2>
      <form class="filters" onSubmit={create}>
        <label>
          New project's name
          <input name="name" required maxLength={200} />
        </label>
        <button type="submit">Create project</button>
      </form>
      <Outcome notice={notice} error={error} />
    </section>
  );
}

function OrgName({ org, role }: { org: string; role: Role | undefined }) {
  const [name, setName] = useState<string>();
  const { notice, error, run } = useOutcome();
  useEffect(
    () => void run(async () => (setName((await api<{ name: string }>('GET', orgPath({ org }))).name), '')),
    [org],
  );
  const owner = role === 'OWNER';
  function rename(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    void run(async () => {
      setName((await api<{ name: string }>('PATCH', orgPath({ org }), { name: valueIn(form)('name') })).name);
      return 'The organization is renamed.';
    });
  }
  return (
    <section aria-labelledby="org-heading">
      <h2 id="org-heading">Organization</h2>
      {name !== undefined && (
        <form class="filters" onSubmit={rename}>
          <label>
            Organization name
            <input name="name" required maxLength={200} value={name} readOnly={!owner} />
          </label>
          {owner && <button type="submit">Rename</button>}
        </form>
      )}
      <Outcome notice={notice} error={error} />
    </section>
  );
}

/** The settings of the project and its organization. */
export function Settings({ org, project, role }: PageProps) {
  const admin = mayAdmin(role);
  return (
    <main>
      <h1>Settings</h1>
      <ProjectSettings org={org} project={project} admin={admin} />
      {admin && <NewProject org={org} />}
      <OrgName org={org} role={role} />
    </main>
  );
}
