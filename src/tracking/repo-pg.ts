import type { PgCommitter } from '../store/pg-committer.ts';
import {
  unsubscribedEventData,
  unsubscribeNotice,
  type TrackingEvent,
  type TrackingStore,
  type Unsubscribe,
} from './store.ts';
import { createPgNoticeWriter } from '../events/index.ts';

/** The tracking store on PostgreSQL (store.ts): the clicked/opened events. */
export function createPgTrackingRepo(tx: PgCommitter): TrackingStore {
  const notices = createPgNoticeWriter();
  return {
    unsubscribe: (u: Unsubscribe) =>
      tx.write(async (t) => {
        const e = await t.query(`SELECT seq FROM emails WHERE id = $1 AND project_id = $2`, [u.emailId, u.projectId]);
        const seq = (e.rows[0] as { seq: number } | undefined)?.seq;
        if (seq === undefined) return 'not_found' as const;
        const s = await t.query(
          `INSERT INTO suppressions (project_id, email, reason, source_email_id, created_at)
           VALUES ($1, $2, 'UNSUBSCRIBE', $3, $4) ON CONFLICT (project_id, email) DO NOTHING`,
          [u.projectId, u.email, u.emailId, u.at],
        );
        if ((s.rowCount ?? 0) === 0) return 'already' as const;
        await t.query(
          `INSERT INTO email_events (id, email_seq, type, data, created_at) VALUES ($1, $2, 'unsubscribed', $3, $4)`,
          [u.eventId, seq, JSON.stringify(unsubscribedEventData(u)), u.at],
        );
        await notices.write(t, [u.projectId], [unsubscribeNotice(u)]);
        return 'added' as const;
      }),
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
