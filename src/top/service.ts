import type { Clock } from '../lib/clock.ts';
import { AppError } from '../errors.ts';
import { parseInput } from '../validation.ts';
import { topFilterSchema } from './filter.ts';
import type { EmailDetail, Snapshot } from './repo.ts';
import type { TopStore } from './store.ts';

/** A project's reader unused this long is dropped (its per-second counts start over). */
const IDLE_MS = 5 * 60_000;

/**
 * svc top through the server (`GET /v1/top`, a key that may read): one reader per project,
 * kept while someone watches, so each refresh reads only what is new (src/top/repo.ts).
 */
export function createTopService(readerFor: (opts: { clock: Clock; projectId: string }) => TopStore, clock: Clock) {
  const readers = new Map<string, { reader: TopStore; usedAt: number }>();
  function readerOf(projectId: string): TopStore {
    const now = clock.now();
    for (const [id, r] of readers) if (now - r.usedAt > IDLE_MS) readers.delete(id);
    let r = readers.get(projectId);
    if (!r) readers.set(projectId, (r = { reader: readerFor({ clock, projectId }), usedAt: now }));
    r.usedAt = now;
    return r.reader;
  }
  return {
    snapshot: (projectId: string, query: unknown): Promise<Snapshot> =>
      readerOf(projectId).snapshot(parseInput(topFilterSchema, query)),
    async detail(projectId: string, emailId: string): Promise<EmailDetail> {
      const d = await readerOf(projectId).detail(emailId);
      if (!d) throw new AppError('not_found', 'Email not found');
      return d;
    },
  };
}

export type TopService = ReturnType<typeof createTopService>;
