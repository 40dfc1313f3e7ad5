// The templates store (src/templates/store.ts) on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Audited } from '../../src/audit/index.ts';
import { isUniqueViolation } from '../../src/store/errors.ts';
import type { Template } from '../../src/templates/index.ts';
import { collateNotByBytes } from './collation.ts';
import { AT, openStore, STORE_KINDS, type OpenedStore } from './stores.ts';

const LATER = '2026-11-26T12:05:00.000Z';

/** The audit row of a change to template `id`. */
const audited = (action: string, id: string): Audited => ({
  actor: { type: 'cli', os_user: 'root' },
  atMs: Date.parse(AT),
  entry: { action, project_id: 'p1', target_type: 'template', target_id: id, before: null, after: null },
});

const template = (id: string, slug: string, more: Partial<Template> = {}): Template => ({
  id,
  project_id: 'p1',
  name: 'Welcome',
  slug,
  subject_template: 'Hi {{ name }}',
  html_template: null,
  text_template: 'Hello',
  variables: { name: 'there', n: 1 },
  version: 1,
  published_version: 1,
  is_layout: false,
  layout_id: null,
  created_at: AT,
  updated_at: AT,
  ...more,
});

describe.each(STORE_KINDS)('TemplatesStore on %s', (kind) => {
  let s: OpenedStore;
  beforeAll(async () => {
    s = await openStore(kind);
    await collateNotByBytes(s, kind, 'templates', 'slug');
    await s.exec(`INSERT INTO projects (id, organization_id, name, created_at) VALUES ('p2', 'o1', 'Q', 'x')`);
  });
  afterAll(() => s?.close());

  const auditOf = async (id: string) =>
    (
      await s.query<{ action: string }>(
        `SELECT action FROM audit_logs WHERE target_id = '${id}' ORDER BY created_at, action`,
      )
    ).map((r) => r.action);

  it('create: inserts the template as given, with its version row and its audit row', async () => {
    await s.store.templates.create(template('t1', 'welcome'), audited('template.create', 't1'));
    expect(await s.store.templates.findById('t1')).toEqual(template('t1', 'welcome'));
    expect(await s.store.templates.listVersions('t1')).toEqual([
      {
        template_id: 't1',
        version: 1,
        subject_template: 'Hi {{ name }}',
        html_template: null,
        text_template: 'Hello',
        variables: { name: 'there', n: 1 },
        layout_id: null,
        created_at: AT,
      },
    ]);
    expect(await auditOf('t1')).toEqual(['template.create']);
  });

  it('create: a slug the project has rejects with a unique violation, and writes nothing', async () => {
    const refused = await s.store.templates.create(template('t9', 'welcome'), audited('template.create', 't9')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isUniqueViolation(refused)).toBe(true);
    expect(await s.store.templates.findById('t9')).toBeUndefined();
    expect(await auditOf('t9')).toEqual([]);
    // Another project may have the slug.
    await s.store.templates.create(template('t8', 'welcome', { project_id: 'p2' }), audited('template.create', 't8'));
    expect((await s.store.templates.findById('t8'))?.project_id).toBe('p2');
  });

  it('findById: the template of that id, in any project, with its variables parsed', async () => {
    expect(await s.store.templates.findById('t8')).toEqual(template('t8', 'welcome', { project_id: 'p2' }));
    expect(await s.store.templates.findById('nope')).toBeUndefined();
  });

  it("findBySlug: the project's template of exactly that slug", async () => {
    expect(await s.store.templates.findBySlug('p1', 'welcome')).toEqual(template('t1', 'welcome'));
    expect((await s.store.templates.findBySlug('p2', 'welcome'))?.id).toBe('t8');
    expect(await s.store.templates.findBySlug('p1', 'Welcome')).toBeUndefined();
    expect(await s.store.templates.findBySlug('p1', 'other')).toBeUndefined();
  });

  it("list: the project's templates, by slug in byte order", async () => {
    for (const [id, slug] of [
      ['t2', 'b_2'],
      ['t3', 'B-1'],
      ['t4', 'a'],
    ] as const) {
      await s.store.templates.create(template(id, slug), audited('template.create', id));
    }
    expect((await s.store.templates.list('p1')).map((t) => t.slug)).toEqual(['B-1', 'a', 'b_2', 'welcome']);
    expect(await s.store.templates.list('p2')).toEqual([template('t8', 'welcome', { project_id: 'p2' })]);
    expect(await s.store.templates.list('p3')).toEqual([]);
  });

  it('update: writes over the version read and raises it by one, with its audit row', async () => {
    const next = template('t1', 'welcome', {
      name: 'Welcome 2',
      html_template: '<p>Hi</p>',
      variables: { name: 'you' },
      updated_at: LATER,
    });
    expect(await s.store.templates.update(next, audited('template.update', 't1'), true)).toBe(true);
    expect(await s.store.templates.findById('t1')).toEqual({ ...next, version: 2, published_version: 2 });
    expect(await s.store.templates.findVersion('t1', 2)).toMatchObject({
      html_template: '<p>Hi</p>',
      variables: { name: 'you' },
      created_at: LATER,
    });
    expect(await auditOf('t1')).toEqual(['template.create', 'template.update']);
  });

  it('update: false and nothing written when the version read is stale, or the template gone', async () => {
    const stale = template('t1', 'welcome', { name: 'stale', updated_at: LATER });
    expect(await s.store.templates.update(stale, audited('template.update.stale', 't1'), true)).toBe(false);
    expect(await s.store.templates.update(template('gone', 'x'), audited('template.update', 'gone'), true)).toBe(false);
    expect(await s.store.templates.findById('t1')).toMatchObject({ name: 'Welcome 2', version: 2 });
    expect((await s.store.templates.listVersions('t1')).map((v) => v.version)).toEqual([2, 1]);
    expect(await auditOf('t1')).toEqual(['template.create', 'template.update']);
    expect(await auditOf('gone')).toEqual([]);
  });

  it('update: never changes the slug or the project', async () => {
    const moved = template('t1', 'moved', { project_id: 'p2', version: 2, updated_at: LATER });
    expect(await s.store.templates.update(moved, audited('template.update', 't1'), true)).toBe(true);
    expect(await s.store.templates.findById('t1')).toMatchObject({ slug: 'welcome', project_id: 'p1', version: 3 });
  });

  it('update: a draft saves the new version and leaves the published one', async () => {
    const draft = template('t1', 'welcome', {
      text_template: 'Draft',
      version: 3,
      published_version: 3,
      updated_at: LATER,
    });
    expect(await s.store.templates.update(draft, audited('template.draft', 't1'), false)).toBe(true);
    expect(await s.store.templates.findById('t1')).toMatchObject({
      text_template: 'Draft',
      version: 4,
      published_version: 3,
    });
    expect((await s.store.templates.findVersion('t1', 4))?.text_template).toBe('Draft');
  });

  it('publish: makes a saved version the published one, with its audit row; false and nothing written for a missing version', async () => {
    expect(await s.store.templates.publish('t1', 1, audited('template.publish', 't1'))).toBe(true);
    expect(await s.store.templates.findById('t1')).toMatchObject({ version: 4, published_version: 1 });
    expect(await s.store.templates.publish('t1', 9, audited('template.publish.missing', 't1'))).toBe(false);
    expect(await s.store.templates.publish('gone', 1, audited('template.publish.missing', 'gone'))).toBe(false);
    expect(await s.store.templates.findById('t1')).toMatchObject({ published_version: 1 });
    expect(await auditOf('t1')).not.toContain('template.publish.missing');
    expect(await auditOf('t1')).toContain('template.publish');
  });

  it('findVersion and listVersions: one version with its variables parsed, all newest first; none for another template', async () => {
    expect(await s.store.templates.findVersion('t1', 1)).toMatchObject({
      version: 1,
      variables: { name: 'there', n: 1 },
    });
    expect(await s.store.templates.findVersion('t1', 99)).toBeUndefined();
    expect((await s.store.templates.listVersions('t1')).map((v) => v.version)).toEqual([4, 3, 2, 1]);
    expect(await s.store.templates.listVersions('gone')).toEqual([]);
  });

  it("remove: 'in_use' and nothing written for a layout a template names, in its latest or published version", async () => {
    await s.store.templates.create(template('L1', 'layout', { is_layout: true }), audited('template.create', 'L1'));
    expect((await s.store.templates.findById('L1'))?.is_layout).toBe(true);
    await s.store.templates.create(template('c1', 'child', { layout_id: 'L1' }), audited('template.create', 'c1'));
    expect(await s.store.templates.remove('L1', audited('template.delete', 'L1'))).toBe('in_use');
    // A draft without the layout: the published version still names it.
    const draft = template('c1', 'child', { layout_id: null, updated_at: LATER });
    expect(await s.store.templates.update(draft, audited('template.draft', 'c1'), false)).toBe(true);
    expect(await s.store.templates.remove('L1', audited('template.delete', 'L1'))).toBe('in_use');
    expect(await s.store.templates.publish('c1', 2, audited('template.publish', 'c1'))).toBe(true);
    expect(await s.store.templates.remove('L1', audited('template.delete', 'L1'))).toBe('deleted');
    expect(await auditOf('L1')).toEqual(['template.create', 'template.delete']);
  });

  it("remove: deletes the template with its versions and audit row; 'missing' and nothing written when none", async () => {
    expect(await s.store.templates.remove('t2', audited('template.delete', 't2'))).toBe('deleted');
    expect(await s.store.templates.findById('t2')).toBeUndefined();
    expect(await s.store.templates.listVersions('t2')).toEqual([]);
    expect(await s.store.templates.remove('t2', audited('template.delete.again', 't2'))).toBe('missing');
    expect(await auditOf('t2')).toEqual(['template.create', 'template.delete']);
  });
});
