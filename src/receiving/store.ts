// The receiving store: what receiving mail (issue 34) asks of a database, whichever runs.
// repo.ts (SQLite) and repo-pg.ts (PostgreSQL) implement it; test/contract/receiving.test.ts
// holds both to it.
import type { Audited } from '../audit/index.ts';

export type RouteKind = 'exact' | 'catchall' | 'prefix';
export type RouteAction = 'webhook' | 'forward' | 'hold';

export interface RouteRow {
  id: string;
  project_id: string;
  domain_id: string;
  /** The receiving domain's name, lower case. */
  domain: string;
  kind: RouteKind;
  /** exact: the whole local part; prefix: the part before `+`; catchall: ''. Lower case. */
  local_part: string;
  action: RouteAction;
  webhook_id: string | null;
  /** JSON array of addresses (forward). */
  forward_to: string | null;
  created_at: string;
  updated_at: string;
}

export type ReceivedOutcome = 'queued' | 'forwarded' | 'held' | 'failed';

/** A received message's row, without its bytes. */
export interface ReceivedRow {
  id: string;
  project_id: string;
  route_id: string | null;
  action: RouteAction;
  outcome: ReceivedOutcome;
  detail: string | null;
  forwarded_email_id: string | null;
  mail_from: string | null;
  /** JSON array: the envelope recipients this route took. */
  rcpt_to: string;
  remote_ip: string | null;
  helo: string | null;
  from_email: string | null;
  /** JSON array of the To field's addresses. */
  to_emails: string;
  subject: string;
  message_id: string | null;
  size: number;
  /** JSON: auth.ts AuthResults. */
  auth: string;
  received_at: string;
}

/** The webhook event a received message queues, in the same transaction as its row. */
export interface ReceivedEvent {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: 'email.received';
  payload: string;
  next_attempt_at: string;
  created_at: string;
}

/** How a received message's webhook event went, from the outbox and the webhook's records. */
export interface EventProgress {
  /** pending: in the outbox; succeeded or failed: its last record, once out of the outbox. */
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
}

export interface ReceivedFilter {
  route_id?: string | undefined;
  outcome?: ReceivedOutcome | undefined;
  /** A substring of the From address, the subject or an envelope recipient (without regard to ASCII case). */
  q?: string | undefined;
  /** received_at bounds, inclusive. */
  from?: string | undefined;
  to?: string | undefined;
  /** The id of the last message of the previous page: the next page is older. */
  before?: string | undefined;
}

export interface ReceivingStore {
  /** Inserts the route with its audit row; a pattern already routed rejects with the store's UNIQUE error, nothing written. */
  createRoute(row: RouteRow, a: Audited): Promise<void>;
  /** Writes the route's action and target with its audit row. */
  updateRoute(row: RouteRow, a: Audited): Promise<void>;
  /** Deletes the route with its audit row; false, nothing written, when absent. */
  removeRoute(id: string, a: Audited): Promise<boolean>;
  findRoute(id: string): Promise<RouteRow | undefined>;
  /** The project's routes, oldest first. */
  listRoutes(projectId: string): Promise<RouteRow[]>;
  /** Every route at `domain` (lower case) when it is a receiving domain; [] otherwise. */
  routesAt(domain: string): Promise<RouteRow[]>;
  /** Turns receiving on or off for the domain, with its audit row; false when the domain is gone. */
  setReceiving(domainId: string, on: boolean, a: Audited): Promise<boolean>;

  /** Stores a received message with its bytes and, when it has one, its webhook event, in one transaction. */
  receive(row: ReceivedRow, raw: Buffer, event: ReceivedEvent | null): Promise<void>;
  /** Records what a forward became (forwarded with its email, or failed with why). */
  recordForward(
    id: string,
    outcome: 'forwarded' | 'failed',
    detail: string | null,
    emailId: string | null,
  ): Promise<void>;
  /** The project's received message, undefined when absent or another's. */
  findReceived(projectId: string, id: string): Promise<ReceivedRow | undefined>;
  /** The message's bytes as received, undefined when it is gone. */
  rawOf(id: string): Promise<Buffer | undefined>;
  /** The project's received messages, newest first, filtered, at most `limit`. */
  listReceived(projectId: string, f: ReceivedFilter, limit: number): Promise<ReceivedRow[]>;
  /** Deletes the project's received message (its pending event goes with it), with its audit row; false when absent. */
  deleteReceived(projectId: string, id: string, a: Audited): Promise<boolean>;
  /** Retention: deletes up to `limit` messages received before `cutoff`, oldest first; the number deleted. */
  deleteReceivedBefore(cutoff: string, limit: number): Promise<number>;
  /** How each message's webhook event went, by message id (absent: the message queued no event). */
  eventProgress(ids: string[]): Promise<Map<string, EventProgress>>;
}
