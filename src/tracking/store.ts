// The tracking store: what tracking asks of a database, whichever runs. repo.ts (SQLite) and
// repo-pg.ts (PostgreSQL) implement it; test/store-contract.test.ts holds both to it.
import { suppressionNotice } from '../suppressions/index.ts';
import type { Notice } from '../events/index.ts';

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

/** A one-click unsubscribe (RFC 8058): the recipient of one email of the project leaves its list. */
export interface Unsubscribe {
  projectId: string;
  emailId: string;
  /** Lower-cased, as the suppression list keeps addresses. */
  email: string;
  /** The id of the `unsubscribed` event, written only when the address was not listed yet. */
  eventId: string;
  at: string;
  /** How it came: the List-Unsubscribe URL (POST) or its mailto (a message to the inbound listener). */
  via?: 'one-click' | 'mailto';
}

/**
 * The `unsubscribed` event's `data`, which a webhook sends as `data.event`: the recipient, as
 * other recipient events name it, the suppression it got, and how it came. Both stores write it.
 */
export function unsubscribedEventData(u: Unsubscribe): Record<string, unknown> {
  return { recipient: u.email, suppression_reason: 'UNSUBSCRIBE', via: u.via ?? 'one-click' };
}

/** The `suppression.added` an unsubscribe queues for the project's webhooks that name it (both stores). */
export function unsubscribeNotice(u: Unsubscribe): Notice {
  const change = { project_id: u.projectId, email: u.email, reason: 'UNSUBSCRIBE', created_at: u.at } as const;
  return suppressionNotice('added', { ...change, source_email_id: u.emailId }, u.at);
}

/** What an unsubscribe did: listed the address (and its event), found it listed already, or found no such email in that project. */
export type UnsubscribeOutcome = 'added' | 'already' | 'not_found';

export interface TrackingStore {
  /**
   * Records the event on the email's timeline; false, and nothing written, when the email does
   * not exist (any more: retention may have deleted it). The lookup and the write are one
   * statement, so an email deleted in between leaves no orphan event.
   */
  addEvent(e: TrackingEvent): Promise<boolean>;
  /**
   * In one transaction: adds the address to the project's suppression list with reason
   * UNSUBSCRIBE (source: the email) and records the `unsubscribed` event on the email. Only an
   * email of that very project counts (a token cannot be moved to another project); an address
   * listed already keeps its entry and gets no second event ('already').
   */
  unsubscribe(u: Unsubscribe): Promise<UnsubscribeOutcome>;
}
