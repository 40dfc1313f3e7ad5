// Apart from pg.ts, which loads the pg driver: the repositories of both stores share a module
// graph, and svc's SQLite commands must not load pg (src/cli/startup.test.ts).
import { createHash } from 'node:crypto';
import type { QueryConfig } from 'pg';

const names = new Map<string, string>();
/**
 * A statement prepared once per connection, by a name made of its text: parsing and planning
 * the accept's statement each time cost PostgreSQL more than running it. The group commit runs
 * every statement this way, and so do the reads every send makes outside it. The
 * repositories' SQL is fixed text (lists go in as arrays), so the names are few.
 */
export function prepared(text: string, values?: unknown[]): QueryConfig {
  let name = names.get(text);
  if (!name) names.set(text, (name = `svc_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`));
  return values ? { name, text, values } : { name, text };
}
