// The project's templates: the list, and an editor with a live preview and a test send.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import {
  Head,
  ErrorLine,
  Pending,
  messageOf,
  mayWrite,
  pageHref,
  valueIn,
  when,
  type PageProps,
  useOutcome,
  Outcome,
} from '../ui.tsx';
import {
  bodyOf,
  draftOf,
  EMPTY,
  Preview,
  usePreview,
  variablesOf,
  type Draft,
  type Template,
} from './template-draft.tsx';

/** The list, or one template's editor (`id`, or `new`). */
export function Templates(props: PageProps) {
  return props.id ? <Editor {...props} /> : <TemplateList {...props} />;
}

function TemplateList({ org, project, role }: PageProps) {
  const [rows, setRows] = useState<Template[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api<Template[]>('GET', `/v1/organizations/${org}/projects/${project}/templates`).then(setRows, (e: unknown) =>
      setError(messageOf(e)),
    );
  }, [org, project]);
  return (
    <main>
      <h1>Templates</h1>
      {mayWrite(role) && (
        <p>
          <a href={pageHref(org, project, 'templates/new')}>New template</a>
        </p>
      )}
      <ErrorLine error={error} />
      {rows?.length === 0 && <p>No template yet.</p>}
      {rows && rows.length > 0 && (
        <table>
          <Head cols={['Name', 'Slug', 'Version', 'Updated (UTC)']} />
          <tbody>
            {rows.map((t) => (
              <tr>
                <td>
                  <a href={pageHref(org, project, `templates/${t.id}`)}>{t.name}</a>
                </td>
                <td>
                  <code>{t.slug}</code>
                </td>
                <td>{t.version}</td>
                <td>{when(t.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}

function Editor({ org, project, id, role }: PageProps) {
  const path = `/v1/organizations/${org}/projects/${project}/templates`;
  const creating = id === 'new';
  const writer = mayWrite(role);
  const [saved, setSaved] = useState<Template>();
  const [draft, setDraft] = useState<Draft | undefined>(creating ? EMPTY : undefined);
  const { notice, error, setError, run } = useOutcome(() => Promise.resolve());
  const preview = usePreview(path, draft);
  useEffect(() => {
    if (creating) return;
    api<Template>('GET', `${path}/${id}`).then(
      (t) => {
        setSaved(t);
        setDraft(draftOf(t));
      },
      (e: unknown) => setError(messageOf(e)),
    );
  }, [path, id]);
  const set = (field: keyof Draft) => (e: Event) =>
    setDraft((d) => ({ ...(d ?? EMPTY), [field]: (e.currentTarget as HTMLInputElement).value }));
  const save = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const d = draft ?? EMPTY;
      if (creating) {
        const t = await api<Template>('POST', path, { name: d.name, slug: d.slug, ...bodyOf(d) });
        location.hash = pageHref(org, project, `templates/${t.id}`);
        return `Created ${t.name}.`;
      }
      const t = await api<Template>('PATCH', `${path}/${id}`, { name: d.name, ...bodyOf(d) });
      setSaved(t);
      return `Saved: version ${t.version}.`;
    });
  };
  async function remove() {
    if (!saved || !confirm(`Delete the template ${saved.name}? Sends naming ${saved.slug} fail from then on.`)) return;
    await run(async () => {
      await api('DELETE', `${path}/${saved.id}`);
      location.hash = pageHref(org, project, 'templates');
      return `Deleted ${saved.name}.`;
    });
  }
  if (!draft) return <Pending error={error} />;
  return (
    <main>
      <p>
        <a href={pageHref(org, project, 'templates')}>← Templates</a>
      </p>
      <h1>{creating ? 'New template' : saved?.name}</h1>
      {saved && (
        <p>
          Slug <code>{saved.slug}</code>, version {saved.version}, updated {when(saved.updated_at)} UTC
        </p>
      )}
      <Outcome notice={notice} error={error} />
      <div class="template-editor">
        <form class="template-fields" onSubmit={save}>
          <fieldset disabled={!writer}>
            <legend class="visually-hidden">The template</legend>
            <label>
              Name
              <input value={draft.name} onInput={set('name')} required maxLength={200} />
            </label>
            <label>
              Slug
              <input value={draft.slug} onInput={set('slug')} required maxLength={100} readOnly={!creating} />
            </label>
            <label>
              Subject
              <input value={draft.subject_template} onInput={set('subject_template')} required />
            </label>
            <label>
              HTML
              <textarea value={draft.html_template} onInput={set('html_template')} rows={12} spellcheck={false} />
            </label>
            <label>
              Text
              <textarea value={draft.text_template} onInput={set('text_template')} rows={6} spellcheck={false} />
            </label>
            <label>
              Variables (JSON: sample values for the preview and the test send)
              <textarea value={draft.variables} onInput={set('variables')} rows={5} spellcheck={false} />
            </label>
          </fieldset>
          {writer && (
            <p class="actions">
              <button type="submit">{creating ? 'Create template' : 'Save'}</button>
              {saved && (
                <button type="button" class="secondary" onClick={() => void remove()}>
                  Delete template
                </button>
              )}
            </p>
          )}
        </form>
        <Preview preview={preview} />
      </div>
      {writer && saved && <TestSend path={`${path}/${saved.id}`} draft={draft} run={run} org={org} project={project} />}
    </main>
  );
}

/** Sends the saved template, with the draft's variables, to one address. */
function TestSend(props: {
  path: string;
  draft: Draft;
  org: string;
  project: string;
  run: (work: () => Promise<string | undefined>) => Promise<void>;
}) {
  const [sent, setSent] = useState<{ id: string; status: string }>();
  const send = (e: Event) => {
    e.preventDefault();
    const field = valueIn(e.currentTarget as HTMLFormElement);
    void props.run(async () => {
      setSent(undefined);
      const body = { to: field('to'), from: field('from'), env: field('env'), variables: variablesOf(props.draft) };
      const r = await api<{ id: string; status: string; skipped_recipients: { email: string }[] }>(
        'POST',
        `${props.path}/test-send`,
        body,
      );
      setSent(r);
      const skipped = r.skipped_recipients.map((s) => s.email).join(', ');
      return `Test send accepted: ${r.status}.${skipped ? ` Skipped: ${skipped}.` : ''}`;
    });
  };
  return (
    <section aria-labelledby="test-send-heading">
      <h2 id="test-send-heading">Test send</h2>
      <p>Sends the saved version, with the variables above, through the same rules as the API.</p>
      <form class="filters" onSubmit={send}>
        <label>
          To
          <input name="to" type="email" required />
        </label>
        <label>
          From
          <input name="from" type="email" required />
        </label>
        <label>
          Environment
          <select name="env">
            <option value="LIVE">LIVE (delivered)</option>
            <option value="TEST">TEST (stored, not delivered)</option>
          </select>
        </label>
        <button type="submit">Send test</button>
      </form>
      {sent && (
        <p>
          <a href={pageHref(props.org, props.project, `emails/${sent.id}`)}>Open the test email</a>
        </p>
      )}
    </section>
  );
}
