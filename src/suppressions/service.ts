import { operator, type Actor, type Audited } from '../audit/index.ts';
import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { parseInput } from '../validation.ts';
import type { CsvRow } from './csv.ts';
import type { SuppressionsStore } from './store.ts';
import { addSuppressionSchema, type Suppression, type SuppressionFilter, type SuppressionReason } from './schema.ts';

export interface SuppressionsDeps {
  repo: SuppressionsStore;
  clock: Clock;
}

/** Import writes in chunks so one huge file never holds the writer for long. */
const IMPORT_CHUNK = 1000;

/** A line of an import that was not taken, and why. */
export interface RefusedRow {
  line: number;
  email: string;
  message: string;
}

/** The per-project suppression list: manual entries, imports, exports. */
export function createSuppressionsService({ repo, clock }: SuppressionsDeps) {
  /** The audit row of a change to the list (the audit writer finds the project's organization). */
  const change = (actor: Actor, action: string, projectId: string, id: string, before: unknown, after: unknown) =>
    ({
      actor,
      atMs: clock.now(),
      entry: { action, project_id: projectId, target_type: 'suppression', target_id: id, before, after },
    }) satisfies Audited;

  return {
    async add(
      projectId: string,
      input: { email: string; reason?: string | undefined },
      actor: Actor = operator(),
    ): Promise<Suppression> {
      const data = parseInput(addSuppressionSchema, input);
      const email = data.email.toLowerCase();
      const before = (await repo.find(projectId, email)) ?? null;
      const after = { email, reason: data.reason };
      const audited = change(actor, 'suppression.add', projectId, email, before, after);
      await repo.addMany(projectId, [after], iso(clock.now()), audited);
      return (await repo.find(projectId, email))!;
    },

    async remove(
      projectId: string,
      email: string,
      actor: Actor = operator(),
    ): Promise<{ email: string; removed: true }> {
      const address = email.toLowerCase();
      const before = await repo.find(projectId, address);
      const audited = change(actor, 'suppression.remove', projectId, address, before ?? null, null);
      if (!before || !(await repo.remove(projectId, address, audited))) {
        throw new AppError('not_found', `${email} is not suppressed`);
      }
      return { email: address, removed: true };
    },

    /** Every entry of a project, in address order, page by page. */
    async *iterate(projectId: string, filter: SuppressionFilter = {}, pageSize = 1000): AsyncGenerator<Suppression> {
      let after = '';
      for (;;) {
        const page = await repo.listPage(projectId, after, pageSize, filter);
        yield* page;
        if (page.length < pageSize) return;
        after = page.at(-1)!.email;
      }
    },

    async list(projectId: string, limit: number, after = '', filter: SuppressionFilter = {}): Promise<Suppression[]> {
      return repo.listPage(projectId, after, limit, filter);
    },

    /**
     * Imports the valid rows in chunks (each one transaction with its audit
     * row) and reports the others with their line and reason; a broken row
     * never stops the rest. `onProgress` gets the number of rows handled.
     */
    async importRows(
      projectId: string,
      rows: AsyncIterable<CsvRow>,
      onProgress: (done: number) => void = () => {},
      actor: Actor = operator(),
    ): Promise<{ imported: number; invalid: RefusedRow[] }> {
      const invalid: RefusedRow[] = [];
      let chunk: { email: string; reason: SuppressionReason }[] = [];
      let imported = 0;
      let done = 0;
      const flush = async () => {
        if (chunk.length) {
          const after = { count: chunk.length, emails: chunk.map((r) => r.email) };
          const audited = change(actor, 'suppression.import', projectId, 'import', null, after);
          await repo.addMany(projectId, chunk, iso(clock.now()), audited);
        }
        imported += chunk.length;
        chunk = [];
        onProgress(done);
      };
      for await (const row of rows) {
        done++;
        if ('error' in row) {
          invalid.push({ line: row.line, email: '', message: row.error });
          continue;
        }
        const r = addSuppressionSchema.safeParse({ email: row.email, reason: row.reason || undefined });
        if (r.success) chunk.push({ email: r.data.email.toLowerCase(), reason: r.data.reason });
        else {
          const issue = r.error.issues[0]!;
          invalid.push({ line: row.line, email: row.email, message: `${issue.path.join('.')}: ${issue.message}` });
        }
        if (chunk.length >= IMPORT_CHUNK) await flush();
      }
      await flush();
      // The parser reads ahead, so a malformed line can be reported before the rows above it.
      return { imported, invalid: invalid.sort((a, b) => a.line - b.line) };
    },
  };
}

export type SuppressionsService = ReturnType<typeof createSuppressionsService>;
