import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/db.ts';
import type { Committer } from '../store/committer.ts';
import type { Attachment } from './content.ts';
import type { ListQuery } from './schema.ts';
import type { IdempotencySql } from '../idempotency/index.ts';
import type { UsageSql } from '../limits/index.ts';
import { confirmedNow } from '../keys/index.ts';
import { acceptPlan, replayOf, runPlan } from './accept-plan.ts';
import { emailsListStatement, SQLITE_LIST } from './list-query.ts';
import { planRetentionBatch, type RetentionRow } from './retention-plan.ts';
import type { SqliteSuppressions } from '../suppressions/index.ts';
import type { Audited, AuditWriter } from '../audit/index.ts';
import type {
  AcceptItem,
  AcceptOptions,
  AcceptResult,
  AttachmentInfo,
  EmailRow,
  EmailsStore,
  EventRow,
  NewEmail,
  Recipient,
  RetentionBatch,
  RetentionPage,
  ScheduleChange,
  ScheduleOutcome,
  SendResponse,
} from './store.ts';
import { CHANGEABLE_STATUS, UNSTARTED_RECIPIENT } from './schedule-change.ts';

// The store's types, for the tests and benches that build a store directly.
export type { AcceptOptions, NewEmail, Recipient } from './store.ts';

export interface EmailsRepoDeps {
  suppressions: Pick<SqliteSuppressions, 'findSync'>;
  usage: UsageSql;
  idempotency: IdempotencySql;
  audit: AuditWriter;
}

/** Rows of one recipients INSERT (an email has at most 150 recipients: to, cc and bcc). */
const RECIPIENTS_PER_INSERT = 16;

/** The emails store on SQLite (store.ts): emails, their recipient rows, attachments and events. */
export function createEmailsRepo(db: Db, tx: Committer, deps: EmailsRepoDeps): EmailsStore {
  // Recipients go in by up to RECIPIENTS_PER_INSERT rows per statement, one prepared
  // statement per row count: three one-row INSERTs cost 12 µs, one three-row INSERT 10
  // (docs/performance.md, "Hot paths, second session").
  const recipientInserts = new Map<number, Statement>();
  const recipientInsert = (rows: number): Statement => {
    let st = recipientInserts.get(rows);
    if (!st) {
      const values = Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
      st = db.prepare(
        `INSERT INTO recipients (email_seq, project_id, address, address_lc, domain, kind, status, next_attempt_at,
                                 updated_at) VALUES ${values}`,
      );
      recipientInserts.set(rows, st);
    }
    return st;
  };
  const w = {
    // Positional parameters: binding a fresh object by name costs more per email than the insert of a tag.
    email: db.prepare(
      `INSERT INTO emails (id, project_id, api_key_id, env, source, status, from_email, from_name, to_emails, cc_emails,
         bcc_emails, reply_to, subject, tags, headers, template_id, template_version, created_at,
         dkim_signing_status, is_trial, resent_from, message_id, one_click_unsubscribe, scheduled_at, metadata)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    body: db.prepare('INSERT INTO email_bodies (email_seq, html_body, text_body, raw_message) VALUES (?, ?, ?, ?)'),
    tag: db.prepare('INSERT OR IGNORE INTO email_tags (email_seq, project_id, tag) VALUES (?, ?, ?)'),
    attachment: db.prepare(
      `INSERT INTO attachments (email_seq, position, filename, content_type, size, content, content_id)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    event: db.prepare('INSERT INTO email_events (id, email_seq, type, data, created_at) VALUES (?, ?, ?, ?, ?)'),
  };
  // `= +?` in a join: see the claim's read of its emails (delivery/repo.ts).
  const byId = db.prepare<[string], EmailRow>(
    `SELECT e.*, b.html_body, b.text_body, b.raw_message FROM emails e LEFT JOIN email_bodies b ON b.email_seq = e.seq
     WHERE e.id = +?`,
  );
  const trialOf = db.prepare<[string], { id: string }>('SELECT id FROM emails WHERE project_id = ? AND is_trial = 1');
  const attachmentsOf = db.prepare<[number], Attachment>(
    'SELECT filename, content_type, content, content_id FROM attachments WHERE email_seq = +? ORDER BY position',
  );
  const attachmentInfoOf = db.prepare<[number], AttachmentInfo>(
    'SELECT filename, content_type, size, content_id FROM attachments WHERE email_seq = +? ORDER BY position',
  );
  const seqOf = db.prepare<[string, string], { seq: number; created_at: string }>(
    'SELECT seq, created_at FROM emails WHERE id = ? AND project_id = ?',
  );
  // `+?`: a bare parameter there makes SQLite re-prepare the statement at each new binding
  // (see createDeliveryRepo).
  const events = db.prepare<[number], EventRow>(
    'SELECT id, type, data, ip_address, user_agent, created_at FROM email_events WHERE email_seq = +? ORDER BY seq',
  );
  const retentionPage = db.prepare<[number, number], RetentionRow>(
    'SELECT seq, created_at, status FROM emails WHERE seq > +? ORDER BY seq LIMIT +?',
  );
  const retentionAt = db.prepare<[string], RetentionRow>(
    'SELECT seq, created_at, status FROM emails WHERE seq IN (SELECT value FROM json_each(?))',
  );
  const dropBodies = db.prepare('DELETE FROM email_bodies WHERE email_seq = ?');
  const dropAttachments = db.prepare('DELETE FROM attachments WHERE email_seq = ?');
  // Recipients, tags, attachments and events go with it (ON DELETE CASCADE).
  const deleteEmail = db.prepare('DELETE FROM emails WHERE seq = ?');
  const listCache = new Map<string, ReturnType<Db['prepare']>>();
  const s = {
    email: db.prepare<[string, string], { seq: number; status: string; scheduled_at: string | null }>(
      'SELECT seq, status, scheduled_at FROM emails WHERE id = ? AND project_id = ?',
    ),
    recipients: db.prepare<[number], { total: number; unstarted: number }>(
      `SELECT count(*) AS total, coalesce(sum(CASE WHEN ${UNSTARTED_RECIPIENT} THEN 1 ELSE 0 END), 0) AS unstarted
       FROM recipients WHERE email_seq = ?`,
    ),
    cancelRecipients: db.prepare(
      "UPDATE recipients SET status = 'CANCELED', next_attempt_at = NULL, updated_at = ? WHERE email_seq = ?",
    ),
    cancelEmail: db.prepare("UPDATE emails SET status = 'CANCELED' WHERE seq = ?"),
    moveRecipients: db.prepare('UPDATE recipients SET next_attempt_at = ?, updated_at = ? WHERE email_seq = ?'),
    moveEmail: db.prepare('UPDATE emails SET scheduled_at = ? WHERE seq = ?'),
  };

  /** store.ts, changeSchedule: the rule is schedule-change.ts's; SQLite's writer is the only one, so reads are current. */
  function changeSchedule(
    projectId: string,
    id: string,
    change: ScheduleChange,
    now: string,
    audited?: Audited,
  ): ScheduleOutcome {
    const out = changeScheduleRows(projectId, id, change, now);
    if (audited && out.outcome === 'done') deps.audit.record(audited.actor, audited.entry, audited.atMs);
    return out;
  }

  function changeScheduleRows(projectId: string, id: string, change: ScheduleChange, now: string): ScheduleOutcome {
    const e = s.email.get(id, projectId);
    if (!e) return { outcome: 'missing' };
    const r = s.recipients.get(e.seq)!;
    if (e.status !== CHANGEABLE_STATUS || r.total === 0 || r.unstarted !== r.total) {
      return { outcome: 'started', status: e.status };
    }
    if ('cancel' in change) {
      s.cancelRecipients.run(now, e.seq);
      s.cancelEmail.run(e.seq);
      // After the status: the webhook outbox trigger reads the email's status into the event.
      w.event.run(change.cancel.eventId, e.seq, 'canceled', '{}', now);
      return { outcome: 'done', status: 'CANCELED', scheduled_at: e.scheduled_at };
    }
    s.moveRecipients.run(change.at, now, e.seq);
    s.moveEmail.run(change.at, e.seq);
    return { outcome: 'done', status: e.status, scheduled_at: change.at };
  }

  /**
   * A retention batch (store.ts, dropContentBefore) in one short write transaction: `apply`
   * runs on each email the plan (retention-plan.ts) acts on and says whether it changed anything.
   */
  function retentionBatch(
    cutoff: string,
    page: RetentionPage,
    apply: (seq: number) => number,
  ): Promise<RetentionBatch> {
    return tx.write(() => {
      const again = page.held.length ? retentionAt.all(JSON.stringify(page.held)) : [];
      const plan = planRetentionBatch(cutoff, page, again, retentionPage.all(page.after, page.limit));
      const changed = plan.act.filter((seq) => apply(seq) > 0).length;
      return { changed, next: plan.next, held: plan.held, done: plan.done };
    });
  }

  /** Inserts a new email with its recipients, attachments and first event; runs inside a caller's transaction. */
  function insertEmail(e: NewEmail, recipients: Recipient[]): void {
    const live = e.env === 'LIVE';
    const seq = Number(w.email.run(...emailValues(e), e.scheduled_at ?? null, metadataOf(e)).lastInsertRowid);
    // A scheduled email's recipients are first due at its time (scheduled sending: the queue is the schedule).
    const due = live ? (e.scheduled_at ?? e.created_at) : null;
    if (e.html !== null || e.text !== null || e.raw) w.body.run(seq, e.html, e.text, e.raw ?? null);
    for (const t of new Set(e.tags)) w.tag.run(seq, e.project_id, t);
    for (let i = 0; i < recipients.length; i += RECIPIENTS_PER_INSERT) {
      const chunk = recipients.slice(i, i + RECIPIENTS_PER_INSERT);
      const params: unknown[] = [];
      for (const r of chunk) {
        const lc = r.address.toLowerCase();
        const domain = lc.slice(lc.lastIndexOf('@') + 1);
        params.push(seq, e.project_id, r.address, lc, domain, r.kind, e.status, due, e.created_at);
      }
      recipientInsert(chunk.length).run(params);
    }
    e.attachments.forEach((a, i) =>
      w.attachment.run(seq, i, a.filename, a.content_type, a.content.length, a.content, a.content_id ?? null),
    );
    w.event.run(e.event.id, seq, e.event.type, JSON.stringify(e.event.data), e.created_at);
  }

  /** A page of the project's emails (list-query.ts); statements are kept by their SQL. */
  function list(projectId: string, q: ListQuery): EmailRow[] {
    const id = q.before ?? q.after;
    const cursor = id === undefined ? undefined : seqOf.get(id, projectId);
    if (id !== undefined && !cursor) return [];
    const { sql, params, reverse } = emailsListStatement(SQLITE_LIST, projectId, q, cursor);
    let stmt = listCache.get(sql);
    if (!stmt) listCache.set(sql, (stmt = db.prepare(sql)));
    const rows = stmt.all(params) as EmailRow[];
    return reverse ? rows.reverse() : rows;
  }

  /**
   * Accepts one email atomically (accept-plan.ts): each ask of the plan answered inside the
   * caller's group-committed transaction.
   */
  function accept(e: NewEmail, recipients: Recipient[], opts: AcceptOptions): AcceptResult {
    return runPlan(acceptPlan(e, recipients, opts), (ask) => {
      switch (ask.step) {
        case 'epoch':
          return confirmedNow(opts.auth!);
        case 'prior':
          return deps.idempotency.find(e.project_id, opts.idempotency!.key, e.created_at);
        case 'trial':
          return trialOf.get(e.project_id) !== undefined;
        case 'reasons':
          return (address: string) => deps.suppressions.findSync(e.project_id, address)?.reason;
        case 'reserve':
          return deps.usage.reserve(opts.volume!.orgId, ask.count, opts.volume!.limits, opts.volume!.now);
        case 'insert':
          return insertEmail(e, ask.recipients);
        case 'save': {
          const { key, hash, expiresAt } = opts.idempotency!;
          return deps.idempotency.save(e.project_id, key, hash, ask.response, e.id, e.created_at, expiresAt);
        }
      }
    });
  }

  return {
    acceptEmail: (e: NewEmail, recipients: Recipient[], opts: AcceptOptions) =>
      tx.write(() => accept(e, recipients, opts)),
    // One write per item, queued in their order: the committer commits them as one group.
    acceptEmails: (items: readonly AcceptItem[]) =>
      Promise.allSettled(items.map((i) => tx.write(() => accept(i.email, i.recipients, i.opts)))),
    // A refusal (replayOf throws) is a rejected promise, as on PostgreSQL, not a throw.
    findIdempotent: async (projectId: string, key: string, hash: string, nowIso: string) => {
      const prior = deps.idempotency.find(projectId, key, nowIso);
      if (!prior) return undefined;
      // The first send may be committed and not yet synced (committer.ts, walSync): its replay is
      // a 202 too, so it waits for the disk as the first one does.
      await tx.durable();
      return replayOf(prior, hash);
    },
    resendEmail: (
      e: NewEmail,
      recipients: Recipient[],
      opts: AcceptOptions,
      audited: (r: SendResponse) => Audited,
    ): Promise<SendResponse> =>
      tx.write(() => {
        const { response } = accept(e, recipients, opts);
        const a = audited(response);
        deps.audit.record(a.actor, a.entry, a.atMs);
        return response;
      }),
    suppressionOf: (projectId: string, address: string): Promise<string | null> =>
      Promise.resolve(deps.suppressions.findSync(projectId, address.toLowerCase())?.reason ?? null),
    dropContentBefore: (cutoff: string, page: RetentionPage) =>
      retentionBatch(cutoff, page, (seq) => dropBodies.run(seq).changes + dropAttachments.run(seq).changes),
    deleteBefore: (cutoff: string, page: RetentionPage) =>
      retentionBatch(cutoff, page, (seq) => deleteEmail.run(seq).changes),
    findById: (id: string) => Promise.resolve(byId.get(id)),
    listAttachments: (seq: number) => Promise.resolve(attachmentsOf.all(seq)),
    listAttachmentInfo: (seq: number) => Promise.resolve(attachmentInfoOf.all(seq)),
    list: (projectId: string, q: ListQuery) => Promise.resolve(list(projectId, q)),
    listEvents: (seq: number) => Promise.resolve(events.all(seq)),
    changeSchedule: (projectId, id, change, nowIso, audited) =>
      tx.write(() => changeSchedule(projectId, id, change, nowIso, audited)),
  };
}

/**
 * The values of an `emails` row for a new email, in the column order both stores' inserts
 * name: id, project_id, api_key_id, env, source, status, from_email, from_name, to_emails,
 * cc_emails, bcc_emails, reply_to, subject, tags, headers, template_id, template_version,
 * created_at, dkim_signing_status, is_trial, resent_from, message_id, one_click_unsubscribe.
 */
export function emailValues(e: NewEmail): unknown[] {
  return [
    e.id,
    e.project_id,
    e.api_key_id,
    e.env,
    e.source,
    e.status,
    e.from_email,
    e.from_name,
    JSON.stringify(e.to),
    json(e.cc),
    json(e.bcc),
    json(e.reply_to),
    e.subject,
    JSON.stringify(e.tags),
    JSON.stringify(e.headers),
    e.template_id,
    e.template_version,
    e.created_at,
    e.env === 'LIVE' ? 'not_signed' : null,
    e.trial ? 1 : 0,
    e.resent_from ?? null,
    e.message_id ?? null,
    e.one_click_unsubscribe == null ? null : Number(e.one_click_unsubscribe),
  ];
}

const json = (v: unknown) => (v === null ? null : JSON.stringify(v));

/** An email's metadata as stored (JSON text), null without. */
export const metadataOf = (e: NewEmail) => (e.metadata ? JSON.stringify(e.metadata) : null);
