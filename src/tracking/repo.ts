import type { Port } from '../store/port.ts';
import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';

export interface TrackingEvent {
  id: string;
  emailId: string;
  type: 'clicked' | 'opened';
  data: Record<string, unknown>;
  ip: string | null;
  userAgent: string | null;
  at: string;
}

/** SQL of tracking: the clicked/opened events. */
export function createTrackingRepo(db: Db, tx: Committer) {
  // One statement: the email is looked up and the event written atomically; no row when the email is gone.
  const addEvent = db.prepare(
    `INSERT INTO email_events (id, email_seq, type, data, ip_address, user_agent, created_at)
     SELECT ?, seq, ?, ?, ?, ?, ? FROM emails WHERE id = ?`,
  );
  return {
    /** Records the event; false when the email does not exist (any more). */
    addEvent: (e: TrackingEvent) =>
      tx.write(
        () => addEvent.run(e.id, e.type, JSON.stringify(e.data), e.ip, e.userAgent, e.at, e.emailId).changes > 0,
      ),
  };
}

/** The tracking repository behind the store seam (SQLite here, PostgreSQL in repo-pg.ts). */
export type TrackingRepo = Port<ReturnType<typeof createTrackingRepo>>;
