import type { PgCommitter } from '../store/pg-committer.ts';
import type { TrackingEvent, TrackingStore } from './store.ts';

/** The tracking store on PostgreSQL (store.ts): the clicked/opened events. */
export function createPgTrackingRepo(tx: PgCommitter): TrackingStore {
  return {
    addEvent: (e: TrackingEvent) =>
      tx.write(async (t) => {
        const r = await t.query(
          `INSERT INTO email_events (id, email_seq, type, data, ip_address, user_agent, created_at)
           SELECT $1, seq, $2, $3, $4, $5, $6 FROM emails WHERE id = $7`,
          [e.id, e.type, JSON.stringify(e.data), e.ip, e.userAgent, e.at, e.emailId],
        );
        return (r.rowCount ?? 0) > 0;
      }),
  };
}
