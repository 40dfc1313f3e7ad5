import type { Readable } from 'node:stream';
import { csvStream } from '../lib/csv.ts';
import type { AuditLog } from './schema.ts';

const COLUMNS = [
  'id',
  'created_at',
  'action',
  'actor_type',
  'actor_id',
  'actor_name',
  'ip',
  'project_id',
  'target_type',
  'target_id',
  'before',
  'after',
];

/** The audit log as CSV, streamed; `before`/`after` as JSON. */
export function writeAuditCsv(rows: AsyncIterable<AuditLog>): Readable {
  async function* flat() {
    for await (const r of rows) {
      yield [
        r.id,
        r.created_at,
        r.action,
        r.actor.type,
        r.actor.id,
        r.actor.name,
        r.actor.ip,
        r.project_id,
        r.target_type,
        r.target_id,
        r.before === null ? '' : JSON.stringify(r.before),
        r.after === null ? '' : JSON.stringify(r.after),
      ];
    }
  }
  return csvStream(COLUMNS, flat());
}
