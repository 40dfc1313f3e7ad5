import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { newId, isUuid } from '../lib/ids.ts';
import { uniqueOrConflict } from '../store/errors.ts';
import { parseInput } from '../validation.ts';
import type { Renderer } from './renderer.ts';
import type { TemplatesStore } from './store.ts';
import { operator, type Actor, type Audited } from '../audit/index.ts';
import {
  createTemplateSchema,
  previewTemplateSchema,
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

/** Stored Jinja2-style templates: created and updated only once they compile. */
export function createTemplatesService({ repo, clock, renderer }: TemplatesDeps) {
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

  return {
    getTemplate,

    /** The template a send names by slug: 404 not_found when the project has none (send rule 6). */
    async getBySlug(projectId: string, slug: string): Promise<Template> {
      const t = await repo.findBySlug(projectId, slug);
      if (!t) throw new AppError('not_found', `no template with slug ${slug}`, { slug });
      return t;
    },

    list: (projectId: string) => repo.list(projectId),

    /**
     * Renders an unsaved template with sample variables through the sends' sandbox, for the
     * editor's live preview: 422 template_variable_missing or template_render_error as a send.
     */
    async preview(input: unknown) {
      const d = parseInput(previewTemplateSchema, input);
      const source = { subject: d.subject_template, html: d.html_template ?? null, text: d.text_template ?? null };
      return renderer.render(source, d.variables ?? {});
    },

    /** Creates a template after compiling it; a syntax error is 422 template_render_error. */
    async create(projectId: string, input: CreateTemplateInput, actor: Actor = operator()): Promise<Template> {
      const d = parseInput(createTemplateSchema, input);
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
        created_at: iso(clock.now()),
        updated_at: iso(clock.now()),
      };
      await checkTemplateSyntax(t);
      const audit = audited(actor, 'template.create', t, null, t);
      await uniqueOrConflict(repo.create(t, audit), `a template with slug ${d.slug} exists in this project`, {
        slug: d.slug,
      });
      return t;
    },

    /** Partial update; raises `version` by one. */
    async update(
      projectId: string,
      ref: string,
      input: UpdateTemplateInput,
      actor: Actor = operator(),
    ): Promise<Template> {
      const patch = parseInput(updateTemplateSchema, input);
      const current = await getTemplate(projectId, ref);
      const next: Template = { ...current, updated_at: iso(clock.now()) };
      for (const [k, v] of Object.entries(patch)) if (v !== undefined) Object.assign(next, { [k]: v });
      if (!next.html_template && !next.text_template) {
        throw new AppError('request_validation_failed', 'The request failed validation', {
          fields: [{ field: 'html_template', message: 'html_template or text_template is required', code: 'custom' }],
        });
      }
      await checkTemplateSyntax(next);
      const audit = audited(actor, 'template.update', current, current, { ...next, version: current.version + 1 });
      if (!(await repo.update(next, audit))) {
        throw new AppError('conflict', 'the template changed meanwhile: try again');
      }
      return (await repo.findById(current.id))!;
    },

    async remove(projectId: string, ref: string, actor: Actor = operator()): Promise<Template> {
      const t = await getTemplate(projectId, ref);
      await repo.remove(t.id, audited(actor, 'template.delete', t, t, null));
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
