// The tracking store: what tracking asks of a database, whichever runs. repo.ts (SQLite) and
// repo-pg.ts (PostgreSQL) implement it; test/store-contract.test.ts holds both to it.

/** A click or an open, as recorded on the email's timeline. */
export interface TrackingEvent {
  id: string;
  emailId: string;
  type: 'clicked' | 'opened';
  data: Record<string, unknown>;
  ip: string | null;
  userAgent: string | null;
  at: string;
}

export interface TrackingStore {
  /**
   * Records the event on the email's timeline; false, and nothing written, when the email does
   * not exist (any more: retention may have deleted it). The lookup and the write are one
   * statement, so an email deleted in between leaves no orphan event.
   */
  addEvent(e: TrackingEvent): Promise<boolean>;
}
