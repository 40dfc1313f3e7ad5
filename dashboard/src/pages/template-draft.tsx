// The template editor's draft as typed, and its live preview rendered by the server.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { messageOf } from '../ui.tsx';

/** What the editor's draft is made from: a stored template. */
export interface Template {
  id: string;
  name: string;
  slug: string;
  subject_template: string;
  html_template: string | null;
  text_template: string | null;
  variables: Record<string, unknown>;
  /** The latest saved version (the content above is its). */
  version: number;
  /** The version sends render when they name none. */
  published_version: number;
  is_layout: boolean;
  layout_id: string | null;
  updated_at: string;
}
interface Rendered {
  subject: string;
  html: string | null;
  text: string | null;
}
/** The editor's fields as typed: the variables are JSON text until they are sent. */
export interface Draft {
  name: string;
  slug: string;
  subject_template: string;
  html_template: string;
  text_template: string;
  variables: string;
  /** The layout's id; '' for none. */
  layout_id: string;
  /** Set at creation only. */
  is_layout: boolean;
}
/** How long typing must pause before the preview is rendered again. */
const PREVIEW_DEBOUNCE_MS = 300;
export const EMPTY: Draft = {
  name: '',
  slug: '',
  subject_template: '',
  html_template: '',
  text_template: '',
  variables: '{}',
  layout_id: '',
  is_layout: false,
};

export const draftOf = (t: Template): Draft => ({
  name: t.name,
  slug: t.slug,
  subject_template: t.subject_template,
  html_template: t.html_template ?? '',
  text_template: t.text_template ?? '',
  variables: JSON.stringify(t.variables, null, 2),
  layout_id: t.layout_id ?? '',
  is_layout: t.is_layout,
});

/** The draft's variables as an object, or throws a message naming what is wrong with the JSON. */
export function variablesOf(d: Draft): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(d.variables || '{}');
  } catch (e) {
    throw new Error(`The variables are not valid JSON: ${messageOf(e)}`, { cause: e });
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('The variables must be a JSON object');
  return v as Record<string, unknown>;
}

/** The draft as the API takes it: an empty body is none. */
export const bodyOf = (d: Draft) => ({
  subject_template: d.subject_template,
  html_template: d.html_template || null,
  text_template: d.text_template || null,
  variables: variablesOf(d),
  layout_id: d.layout_id || null,
});

/** Renders the draft through the server after typing pauses; the answer or the API's refusal. */
export function usePreview(path: string, draft: Draft | undefined) {
  const [preview, setPreview] = useState<{ rendered?: Rendered; error?: string }>({});
  useEffect(() => {
    if (!draft) return;
    let current = true;
    const timer = setTimeout(() => {
      // bodyOf throws on bad JSON: inside then, so it is shown as the API's refusals are.
      const answer = Promise.resolve().then(() => api<Rendered>('POST', `${path}/preview`, bodyOf(draft)));
      answer.then(
        (rendered) => current && setPreview({ rendered }),
        // The last good render stays, faded, while the draft does not render.
        (e: unknown) => current && setPreview((p) => ({ ...p, error: messageOf(e) })),
      );
    }, PREVIEW_DEBOUNCE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [path, draft]);
  return preview;
}

export function Preview({ preview }: { preview: { rendered?: Rendered; error?: string } }) {
  const r = preview.rendered;
  return (
    <section class="template-preview" aria-labelledby="preview-heading">
      <h2 id="preview-heading">Preview</h2>
      {/* Not an alert: it changes as one types. */}
      {preview.error && (
        <p class="error" role="status">
          {preview.error}
        </p>
      )}
      {r && (
        <div class={preview.error ? 'stale' : undefined}>
          <p>
            Subject: <strong>{r.subject}</strong>
          </p>
          {r.html !== null && (
            // As an email is shown: no scripts, no same origin, the dashboard's policy on loads.
            <iframe class="preview" title="HTML preview" sandbox="" srcdoc={r.html} />
          )}
          {r.text !== null && <pre class="text">{r.text}</pre>}
        </div>
      )}
    </section>
  );
}
