import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId, isUuid } from '../lib/ids.ts';
import { uniqueOrConflict } from '../store/errors.ts';
import { parseInput } from '../validation.ts';
import type { Renderer } from './renderer.ts';
import type { TemplatesStore } from './store.ts';
import { operator, type Actor, type Audited } from '../audit/index.ts';
import { createTemplateContent } from './content.ts';
import { checkLayoutSlots } from './layout.ts';
import {
  createTemplateSchema,
  previewTemplateSchema,
  publishTemplateSchema,
  updateTemplateSchema,
  type CreateTemplateInput,
  type Template,
  type UpdateTemplateInput,
} from './schema.ts';

export interface TemplatesDeps {
  repo: TemplatesStore;
  clock: Clock;
  /** The render pool sends use: a preview renders exactly as a send would. */
  renderer: Pick<Renderer, 'render'>;
}

/** Stored Jinja2-style templates: created and updated only once they compile; every save a version. */
export function createTemplatesService({ repo, clock, renderer }: TemplatesDeps) {
  const content = createTemplateContent(repo);

  /** The audit row of a change to template `t` by `actor`. */
  const audited = (actor: Actor, action: string, t: Template, before: unknown, after: unknown): Audited => ({
    actor,
    atMs: clock.now(),
    entry: { action, project_id: t.project_id, target_type: 'template', target_id: t.id, before, after },
  });

  /** Finds a template of the project by id or slug, or throws not_found. */
  async function getTemplate(projectId: string, ref: string): Promise<Template> {
    const t = (isUuid(ref) ? await repo.findById(ref) : undefined) ?? (await repo.findBySlug(projectId, ref));
    if (!t || t.project_id !== projectId) throw new AppError('not_found', `no template ${ref}`);
    return t;
  }

  /** Compiles `t` and, for a layout, checks its one slot: what every save checks. */
  async function checkSources(t: Template): Promise<void> {
    await checkTemplateSyntax(t);
    if (t.is_layout) checkLayoutSlots(t);
  }

  return {
    getTemplate,

    /**
     * The sources a send renders for the template of that slug (404 not_found when the project
     * has none, send rule 6): its published version, or `version` (a 422 naming template_version
     * when it has none), wrapped in its layout; `version` answers the version used.
     */
    async getBySlug(projectId: string, slug: string, version?: number) {
      const t = await repo.findBySlug(projectId, slug);
      if (!t) throw new AppError('not_found', `no template with slug ${slug}`, { slug });
      const v = await content.versionOf(t, version ?? t.published_version, 'template_version');
      const s = await content.sourcesOf(t, v);
      return {
        id: t.id,
        version: v.version,
        subject_template: s.subject,
        html_template: s.html,
        text_template: s.text,
      };
    },

    list: (projectId: string) => repo.list(projectId),

    /** Every saved version of a template, newest first, without bodies; `published` marks the one sends use. */
    async listVersions(projectId: string, ref: string) {
      const t = await getTemplate(projectId, ref);
      return (await repo.listVersions(t.id)).map((v) => ({
        version: v.version,
        published: v.version === t.published_version,
        layout_id: v.layout_id,
        created_at: v.created_at,
      }));
    },

    /** One saved version of a template with its content; 404 not_found when it has none. */
    async getVersion(projectId: string, ref: string, version: number) {
      const t = await getTemplate(projectId, ref);
      const v = Number.isSafeInteger(version) ? await repo.findVersion(t.id, version) : undefined;
      if (!v) throw new AppError('not_found', `template ${t.slug} has no version ${version}`);
      return { ...v, published: v.version === t.published_version };
    },

    /**
     * Renders an unsaved template (in the layout it names), or a saved one at a version (default
     * its latest, draft or not), with sample variables through the sends' sandbox, for the
     * editor's live preview: 422 template_variable_missing or template_render_error as a send.
     */
    async preview(projectId: string, input: unknown) {
      const d = parseInput(previewTemplateSchema, input);
      if (d.template_id !== undefined) {
        const t = await getTemplate(projectId, d.template_id);
        const v = await content.versionOf(t, d.version ?? t.version, 'version');
        return renderer.render(await content.sourcesOf(t, v), d.variables ?? {});
      }
      const unsaved = {
        subject_template: d.subject_template!,
        html_template: d.html_template ?? null,
        text_template: d.text_template ?? null,
        variables: {},
        layout_id: null,
      };
      const layout = await content.checkLayout(
        projectId,
        { id: null, slug: '', is_layout: false },
        d.layout_id ?? null,
      );
      const sources = await content.sourcesOf(
        { project_id: projectId, is_layout: false },
        { ...unsaved, layout_id: layout?.id ?? null },
      );
      return renderer.render(sources, d.variables ?? {});
    },

    /** Creates a template (version 1, published) after compiling it; a syntax error is 422 template_render_error. */
    async create(projectId: string, input: CreateTemplateInput, actor: Actor = operator()): Promise<Template> {
      const d = parseInput(createTemplateSchema, input);
      const is_layout = d.is_layout ?? false;
      const layout = await content.checkLayout(projectId, { id: null, slug: d.slug, is_layout }, d.layout_id ?? null);
      const t: Template = {
        id: newId(clock.now()),
        project_id: projectId,
        name: d.name,
        slug: d.slug,
        subject_template: d.subject_template,
        html_template: d.html_template ?? null,
        text_template: d.text_template ?? null,
        variables: d.variables ?? {},
        version: 1,
        published_version: 1,
        is_layout,
        layout_id: layout?.id ?? null,
        created_at: iso(clock.now()),
        updated_at: iso(clock.now()),
      };
      await checkSources(t);
      const audit = audited(actor, 'template.create', t, null, t);
      await uniqueOrConflict(repo.create(t, audit), `a template with slug ${d.slug} exists in this project`, {
        slug: d.slug,
      });
      return t;
    },

    /**
     * Partial update: saves a new version (raising `version` by one) and publishes it, unless
     * `draft`, when sends keep the published version.
     */
    async update(
      projectId: string,
      ref: string,
      input: UpdateTemplateInput,
      actor: Actor = operator(),
    ): Promise<Template> {
      const { draft, ...patch } = parseInput(updateTemplateSchema, input);
      const current = await getTemplate(projectId, ref);
      const next: Template = { ...current, updated_at: iso(clock.now()) };
      for (const [k, v] of Object.entries(patch)) if (v !== undefined) Object.assign(next, { [k]: v });
      if (!next.html_template && !next.text_template) {
        throw new AppError('request_validation_failed', 'The request failed validation', {
          fields: [{ field: 'html_template', message: 'html_template or text_template is required', code: 'custom' }],
        });
      }
      if (patch.layout_id !== undefined) {
        next.layout_id = (await content.checkLayout(projectId, current, patch.layout_id))?.id ?? null;
      }
      await checkSources(next);
      const version = current.version + 1;
      const after = { ...next, version, published_version: draft ? current.published_version : version };
      const audit = audited(actor, draft ? 'template.draft' : 'template.update', current, current, after);
      if (!(await repo.update(next, audit, !draft))) {
        throw new AppError('conflict', 'the template changed meanwhile: try again');
      }
      return (await repo.findById(current.id))!;
    },

    /**
     * Makes a saved version the one sends use: a draft's publication, or a rollback to an older
     * version (whose layout, if any, must still be a layout of the project). 422 naming `version`
     * when the template has no such version.
     */
    async publish(projectId: string, ref: string, input: unknown, actor: Actor = operator()): Promise<Template> {
      const d = parseInput(publishTemplateSchema, input);
      const t = await getTemplate(projectId, ref);
      const v = await content.versionOf(t, d.version, 'version');
      await content.checkLayout(projectId, t, v.layout_id);
      const audit = audited(
        actor,
        'template.publish',
        t,
        { published_version: t.published_version },
        { published_version: v.version },
      );
      if (!(await repo.publish(t.id, v.version, audit))) throw new AppError('not_found', `no template ${ref}`);
      return (await repo.findById(t.id))!;
    },

    /** Deletes a template with its versions; 409 conflict for a layout that a template names. */
    async remove(projectId: string, ref: string, actor: Actor = operator()): Promise<Template> {
      const t = await getTemplate(projectId, ref);
      const outcome = await repo.remove(t.id, audited(actor, 'template.delete', t, t, null));
      if (outcome === 'in_use') {
        throw new AppError('conflict', `the layout ${t.slug} is in use: change the templates that name it first`, {
          layout_id: t.id,
        });
      }
      return t;
    },
  };
}

export type TemplatesService = ReturnType<typeof createTemplatesService>;

/** Compiles `t` in the sandbox: nunjucks loads with the first template written, never for a listing. */
async function checkTemplateSyntax(t: Template): Promise<void> {
  const sandbox = await import('./sandbox.ts');
  sandbox.checkTemplateSyntax(t);
}
