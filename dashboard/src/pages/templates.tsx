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
  const [layouts, setLayouts] = useState<Template[]>([]);
  // Bumped by each save or publish: the versions are read again.
  const [rev, setRev] = useState(0);
  const { notice, error, setError, run } = useOutcome(() => Promise.resolve());
  const preview = usePreview(path, draft);
  useEffect(() => {
    api<Template[]>('GET', path).then(
      (all) => setLayouts(all.filter((t) => t.is_layout && t.id !== id)),
      (e: unknown) => setError(messageOf(e)),
    );
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
  // Save publishes the new version; "Save as draft" keeps sends on the published one.
  const save = (e: SubmitEvent) => {
    e.preventDefault();
    const asDraft = (e.submitter as HTMLButtonElement | null)?.value === 'draft';
    void run(async () => {
      const d = draft ?? EMPTY;
      if (creating) {
        const body = { name: d.name, slug: d.slug, ...bodyOf(d), ...(d.is_layout ? { is_layout: true } : {}) };
        const t = await api<Template>('POST', path, body);
        location.hash = pageHref(org, project, `templates/${t.id}`);
        return `Created ${t.name}.`;
      }
      const t = await api<Template>('PATCH', `${path}/${id}`, { name: d.name, ...bodyOf(d), draft: asDraft });
      setSaved(t);
      setRev((r) => r + 1);
      return asDraft
        ? `Saved version ${t.version} as a draft: sends keep version ${t.published_version}.`
        : `Saved and published: version ${t.version}.`;
    });
  };
  const publish = (version: number) =>
    run(async () => {
      const t = await api<Template>('POST', `${path}/${id}/publish`, { version });
      setSaved(t);
      setRev((r) => r + 1);
      return `Published version ${version}: sends use it from now on.`;
    });
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
          Slug <code>{saved.slug}</code>, {saved.is_layout ? 'a layout, ' : ''}version {saved.version} (published:{' '}
          {saved.published_version}), updated {when(saved.updated_at)} UTC
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
            {creating && (
              <label class="check">
                <input
                  type="checkbox"
                  checked={draft.is_layout}
                  onChange={(e) => setDraft((d) => ({ ...(d ?? EMPTY), is_layout: e.currentTarget.checked }))}
                />
                Use as a layout: one <code>{'{{ content }}'}</code> in it holds the body of each template that uses it
              </label>
            )}
            {!draft.is_layout && (
              <label>
                Layout
                <select value={draft.layout_id} onChange={set('layout_id')}>
                  <option value="">none</option>
                  {layouts.map((l) => (
                    <option value={l.id}>{l.name}</option>
                  ))}
                </select>
              </label>
            )}
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
              <button type="submit" value="publish">
                {creating ? 'Create template' : 'Save and publish'}
              </button>
              {saved && (
                <button type="submit" value="draft" class="secondary">
                  Save as draft
                </button>
              )}
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
      {saved && <Versions path={`${path}/${saved.id}`} rev={rev} writer={writer} publish={publish} layouts={layouts} />}
      {writer && saved && <TestSend path={`${path}/${saved.id}`} draft={draft} run={run} org={org} project={project} />}
    </main>
  );
}

interface VersionSummary {
  version: number;
  published: boolean;
  layout_id: string | null;
  created_at: string;
}

/** The saved versions, newest first: which one sends use, and a Publish for each other (a rollback for an older one). */
function Versions(props: {
  path: string;
  rev: number;
  writer: boolean;
  publish: (version: number) => Promise<void>;
  layouts: Template[];
}) {
  const [rows, setRows] = useState<VersionSummary[]>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    api<VersionSummary[]>('GET', `${props.path}/versions`).then(setRows, (e: unknown) => setError(messageOf(e)));
  }, [props.path, props.rev]);
  const layoutName = (lid: string | null) =>
    lid === null ? 'none' : (props.layouts.find((l) => l.id === lid)?.name ?? lid);
  return (
    <section aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions</h2>
      <ErrorLine error={error} />
      {rows && (
        <table class="versions">
          <Head cols={['Version', 'Saved (UTC)', 'Layout', 'State']} actions={props.writer} />
          <tbody>
            {rows.map((v) => (
              <tr>
                <td>{v.version}</td>
                <td>{when(v.created_at)}</td>
                <td>{layoutName(v.layout_id)}</td>
                <td>{v.published ? 'published' : 'saved'}</td>
                {props.writer && (
                  <td>
                    {!v.published && (
                      <button type="button" class="secondary" onClick={() => void props.publish(v.version)}>
                        Publish version {v.version}
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
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
      <p>Sends the latest saved version (a draft too), with the variables above, through the same rules as the API.</p>
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
