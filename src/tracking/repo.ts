import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import {
  unsubscribedEventData,
  unsubscribeNotice,
  type TrackingEvent,
  type TrackingStore,
  type Unsubscribe,
} from './store.ts';
import { createNoticeWriter } from '../events/index.ts';

/** The tracking store on SQLite (store.ts): the clicked/opened events. */
export function createTrackingRepo(db: Db, tx: Committer): TrackingStore {
  // One statement: the email is looked up and the event written atomically; no row when the email is gone.
  const addEvent = db.prepare(
    `INSERT INTO email_events (id, email_seq, type, data, ip_address, user_agent, created_at)
     SELECT ?, seq, ?, ?, ?, ?, ? FROM emails WHERE id = ?`,
  );
  const emailOf = db.prepare(`SELECT seq FROM emails WHERE id = ? AND project_id = ?`);
  const suppress = db.prepare(
    `INSERT INTO suppressions (project_id, email, reason, source_email_id, created_at)
     VALUES (?, ?, 'UNSUBSCRIBE', ?, ?) ON CONFLICT (project_id, email) DO NOTHING`,
  );
  const unsubscribed = db.prepare(
    `INSERT INTO email_events (id, email_seq, type, data, created_at) VALUES (?, ?, 'unsubscribed', ?, ?)`,
  );
  const notices = createNoticeWriter(db);
  return {
    unsubscribe: (u: Unsubscribe) =>
      tx.write(() => {
        const row = emailOf.get(u.emailId, u.projectId) as { seq: number } | undefined;
        if (!row) return 'not_found' as const;
        if (suppress.run(u.projectId, u.email, u.emailId, u.at).changes === 0) return 'already' as const;
        unsubscribed.run(u.eventId, row.seq, JSON.stringify(unsubscribedEventData(u)), u.at);
        notices.write(notices.subscribers([u.projectId], 'suppression.added'), unsubscribeNotice(u));
        return 'added' as const;
      }),
    addEvent: (e: TrackingEvent) =>
      tx.write(
        () => addEvent.run(e.id, e.type, JSON.stringify(e.data), e.ip, e.userAgent, e.at, e.emailId).changes > 0,
      ),
  };
}
