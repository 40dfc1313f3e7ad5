import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { TrackingEvent, TrackingStore } from './store.ts';

/** The tracking store on SQLite (store.ts): the clicked/opened events. */
export function createTrackingRepo(db: Db, tx: Committer): TrackingStore {
  // One statement: the email is looked up and the event written atomically; no row when the email is gone.
  const addEvent = db.prepare(
    `INSERT INTO email_events (id, email_seq, type, data, ip_address, user_agent, created_at)
     SELECT ?, seq, ?, ?, ?, ?, ? FROM emails WHERE id = ?`,
  );
  return {
    addEvent: (e: TrackingEvent) =>
      tx.write(
        () => addEvent.run(e.id, e.type, JSON.stringify(e.data), e.ip, e.userAgent, e.at, e.emailId).changes > 0,
      ),
  };
}
