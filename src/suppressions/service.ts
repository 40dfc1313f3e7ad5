import { AppError } from '../errors.ts';
import { iso, type Clock } from '../lib/clock.ts';
import { parseInput } from '../validation.ts';
import type { SuppressionsRepo } from './repo.ts';
import { addSuppressionSchema, type Suppression, type SuppressionReason } from './schema.ts';

export interface SuppressionsDeps {
  repo: SuppressionsRepo;
  clock: Clock;
}

/** Import writes in chunks so one huge file never holds the writer for long. */
const IMPORT_CHUNK = 1000;

/** The per-project suppression list: manual entries, imports, exports. */
export function createSuppressionsService({ repo, clock }: SuppressionsDeps) {
  async function add(projectId: string, input: { email: string; reason?: string | undefined }) {
    const data = parseInput(addSuppressionSchema, input);
    const email = data.email.toLowerCase();
    await repo.addMany(projectId, [{ email, reason: data.reason }], iso(clock.now()));
    return (await repo.find(projectId, email))!;
  }

  return {
    add,

    async remove(projectId: string, email: string): Promise<{ email: string; removed: true }> {
      const removed = await repo.remove(projectId, email.toLowerCase());
      if (!removed) throw new AppError('not_found', `${email} is not suppressed`);
      return { email: email.toLowerCase(), removed: true };
    },

    /** Every entry of a project, in address order, page by page. */
    async *iterate(projectId: string, pageSize = 1000): AsyncGenerator<Suppression> {
      let after = '';
      for (;;) {
        const page = await repo.listPage(projectId, after, pageSize);
        yield* page;
        if (page.length < pageSize) return;
        after = page.at(-1)!.email;
      }
    },

    async list(projectId: string, limit: number, after = ''): Promise<Suppression[]> {
      return repo.listPage(projectId, after, limit);
    },

    /**
     * Imports validated rows in chunks; invalid rows are reported, not fatal.
     * `onProgress` gets the number of rows handled so far.
     */
    async importRows(
      projectId: string,
      rows: AsyncIterable<{ line: number; email: string; reason?: string | undefined }>,
      onProgress: (done: number) => void = () => {},
    ): Promise<{ imported: number; invalid: { line: number; email: string; message: string }[] }> {
      const invalid: { line: number; email: string; message: string }[] = [];
      let chunk: { email: string; reason: SuppressionReason }[] = [];
      let imported = 0;
      let done = 0;
      const flush = async () => {
        if (chunk.length) await repo.addMany(projectId, chunk, iso(clock.now()));
        imported += chunk.length;
        chunk = [];
        onProgress(done);
      };
      for await (const row of rows) {
        done++;
        const r = addSuppressionSchema.safeParse({ email: row.email, reason: row.reason || undefined });
        if (r.success) chunk.push({ email: r.data.email.toLowerCase(), reason: r.data.reason });
        else invalid.push({ line: row.line, email: row.email, message: r.error.issues[0]!.message });
        if (chunk.length >= IMPORT_CHUNK) await flush();
      }
      await flush();
      return { imported, invalid };
    },
  };
}

export type SuppressionsService = ReturnType<typeof createSuppressionsService>;
