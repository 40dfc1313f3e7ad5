import type { PgIdempotency } from '../idempotency/index.ts';
import type { PgUsage } from '../limits/index.ts';
import type { PgSuppressions } from '../suppressions/index.ts';
import type { PgPool } from '../store/pg.ts';
import type { PgCommitter, PgTx } from '../store/pg-committer.ts';
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
import type { Audited } from '../audit/index.ts';
import type { PgAuditWriter } from '../audit/index.ts';
import type { Attachment } from './content.ts';
import type { ListQuery } from './schema.ts';
import { acceptPlan, replayOf, runPlanAsync } from './accept-plan.ts';
import { emailValues, metadataOf } from './repo.ts';
import { emailsListStatement, PG_LIST, type ListCursor } from './list-query.ts';
import { planRetentionBatch, type RetentionRow } from './retention-plan.ts';

/**
 * The emails store on PostgreSQL (store.ts). The accept of an email (issue 17) is the SQLite
 * store's (repo.ts) in few statements, since each is a round trip and a group's items run
 * one after another on its connection (bench:commit). The email, its body, recipients, tags
 * and first event go in one statement; the triggers (stats, webhook outbox) run as they do
 * on SQLite.
 */
export function createPgEmailsRepo(
  pool: PgPool,
  tx: PgCommitter,
  deps: { usage: PgUsage; idempotency: PgIdempotency; audit: PgAuditWriter; suppressions: PgSuppressions },
): EmailsStore {
  /** The email, its body, recipients, tags and first event in one statement; then its attachments. */
  async function insertEmail(t: PgTx, e: NewEmail, recipients: Recipient[]): Promise<number> {
    const live = e.env === 'LIVE';
    const lc = recipients.map((r) => r.address.toLowerCase());
    const r = await t.query<{ seq: number }>(
      `WITH e AS (
         INSERT INTO emails (id, project_id, api_key_id, env, source, status, from_email, from_name, to_emails,
           cc_emails, bcc_emails, reply_to, subject, tags, headers, template_id, template_version, created_at,
           dkim_signing_status, is_trial, resent_from, message_id, one_click_unsubscribe, scheduled_at, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
                 $23, $36, $37)
         RETURNING seq),
       b AS (
         INSERT INTO email_bodies (email_seq, html_body, text_body, raw_message)
         SELECT seq, $24, $25, $35 FROM e WHERE $24::text IS NOT NULL OR $25::text IS NOT NULL OR $35::bytea IS NOT NULL),
       r AS (
         INSERT INTO recipients (email_seq, project_id, address, address_lc, domain, kind, status, next_attempt_at,
                                 updated_at)
         SELECT e.seq, $2, x.address, x.lc, x.domain, x.kind, $6, $26, $18
         FROM e, unnest($27::text[], $28::text[], $29::text[], $30::text[]) WITH ORDINALITY
              AS x(address, lc, domain, kind, n)
         ORDER BY x.n),
       g AS (
         INSERT INTO email_tags (email_seq, project_id, tag)
         SELECT e.seq, $2, tag FROM e, unnest($31::text[]) AS tag ON CONFLICT DO NOTHING),
       v AS (
         INSERT INTO email_events (id, email_seq, type, data, created_at) SELECT $32, seq, $33, $34, $18 FROM e)
       SELECT seq FROM e`,
      [
        ...emailValues(e),
        e.html,
        e.text,
        // A scheduled email's recipients are first due at its time (repo.ts says why).
        live ? (e.scheduled_at ?? e.created_at) : null,
        recipients.map((x) => x.address),
        lc,
        lc.map((a) => a.slice(a.lastIndexOf('@') + 1)),
        recipients.map((x) => x.kind),
        [...new Set(e.tags)],
        e.event.id,
        e.event.type,
        JSON.stringify(e.event.data),
        e.raw ?? null,
        e.scheduled_at ?? null,
        metadataOf(e),
      ],
    );
    const seq = r.rows[0]!.seq;
    if (e.attachments.length > 0) {
      await t.query(
        `INSERT INTO attachments (email_seq, position, filename, content_type, size, content, content_id)
         SELECT $1, a.n - 1, a.filename, a.content_type, a.size, a.content, a.content_id
         FROM unnest($2::text[], $3::text[], $4::int[], $5::bytea[], $6::text[]) WITH ORDINALITY
              AS a(filename, content_type, size, content, content_id, n)`,
        [
          seq,
          e.attachments.map((a) => a.filename),
          e.attachments.map((a) => a.content_type),
          e.attachments.map((a) => a.content.length),
          e.attachments.map((a) => a.content),
          e.attachments.map((a) => a.content_id ?? null),
        ],
      );
    }
    return seq;
  }

  /** Accepts one email (accept-plan.ts): each ask of the plan answered in the transaction `t`. */
  function accept(t: PgTx, e: NewEmail, recipients: Recipient[], opts: AcceptOptions): Promise<AcceptResult> {
    return runPlanAsync(acceptPlan(e, recipients, opts), async (ask) => {
      switch (ask.step) {
        // PostgreSQL keeps no key without reading the epoch (keys/store.ts, findKept).
        case 'epoch':
          throw new Error('a kept key on PostgreSQL');
        case 'prior': {
          const { key, hash, expiresAt } = opts.idempotency!;
          return deps.idempotency.claim(t, e.project_id, key, hash, e.created_at, expiresAt);
        }
        case 'trial':
          return (
            ((await t.query('SELECT 1 FROM emails WHERE project_id = $1 AND is_trial = 1', [e.project_id])).rowCount ??
              0) > 0
          );
        case 'reasons': {
          const reasons = await deps.suppressions.reasonsIn(t, e.project_id, ask.addresses);
          return (address: string) => reasons.get(address);
        }
        case 'reserve':
          return deps.usage.reserve(t, opts.volume!.orgId, ask.count, opts.volume!.limits, opts.volume!.now);
        case 'insert':
          return insertEmail(t, e, ask.recipients);
        case 'save':
          return deps.idempotency.save(t, e.project_id, opts.idempotency!.key, ask.response, e.id);
      }
    });
  }

  /** A page of the project's emails (list-query.ts). */
  async function list(projectId: string, q: ListQuery): Promise<EmailRow[]> {
    const id = q.before ?? q.after;
    const cursor =
      id === undefined
        ? undefined
        : (
            await pool.query<ListCursor>('SELECT seq, created_at FROM emails WHERE id = $1 AND project_id = $2', [
              id,
              projectId,
            ])
          ).rows[0];
    if (id !== undefined && !cursor) return [];
    const { sql, params, reverse } = emailsListStatement(PG_LIST, projectId, q, cursor);
    const rows = (await pool.query<EmailRow>(sql, params)).rows;
    return reverse ? rows.reverse() : rows;
  }

  /** A retention batch in one short write transaction, as on SQLite (repo.ts, retentionBatch). */
  function retentionBatch(
    cutoff: string,
    page: RetentionPage,
    apply: (t: PgTx, seq: number) => Promise<number>,
  ): Promise<RetentionBatch> {
    return tx.write(async (t) => {
      const again = page.held.length
        ? (
            await t.query<RetentionRow>('SELECT seq, created_at, status FROM emails WHERE seq = ANY($1::bigint[])', [
              page.held,
            ])
          ).rows
        : [];
      const rows = (
        await t.query<RetentionRow>('SELECT seq, created_at, status FROM emails WHERE seq > $1 ORDER BY seq LIMIT $2', [
          page.after,
          page.limit,
        ])
      ).rows;
      const plan = planRetentionBatch(cutoff, page, again, rows);
      let changed = 0;
      for (const seq of plan.act) if ((await apply(t, seq)) > 0) changed++;
      return { changed, next: plan.next, held: plan.held, done: plan.done };
    });
  }
  const deleted = (r: { rowCount: number | null }) => r.rowCount ?? 0;

  /**
   * store.ts, changeSchedule, with schedule-change.ts's rule. The recipients are locked before
   * anything is read of them, and the email row only after: delivery's claim locks recipients
   * (skipping locked ones) and then the emails it stamps, so the two never wait on each other
   * in opposite orders.
   */
  function changeSchedule(projectId: string, id: string, change: ScheduleChange, now: string, audited?: Audited) {
    return tx.write(async (t): Promise<ScheduleOutcome> => {
      const out = await changeScheduleRows(t, projectId, id, change, now);
      if (audited && out.outcome === 'done') await deps.audit.record(t, audited.actor, audited.entry, audited.atMs);
      return out;
    });
  }

  async function changeScheduleRows(
    t: PgTx,
    projectId: string,
    id: string,
    change: ScheduleChange,
    now: string,
  ): Promise<ScheduleOutcome> {
    const e = (
      await t.query<{ seq: number; status: string; scheduled_at: string | null }>(
        'SELECT seq, status, scheduled_at FROM emails WHERE id = $1 AND project_id = $2',
        [id, projectId],
      )
    ).rows[0];
    if (!e) return { outcome: 'missing' };
    if (e.status !== CHANGEABLE_STATUS) return { outcome: 'started', status: e.status };
    const r = (
      await t.query<{ total: number; unstarted: number }>(
        `WITH locked AS (SELECT attempts, lease_until, next_attempt_at FROM recipients WHERE email_seq = $1 FOR UPDATE)
         SELECT count(*)::int AS total, (count(*) FILTER (WHERE ${UNSTARTED_RECIPIENT}))::int AS unstarted FROM locked`,
        [e.seq],
      )
    ).rows[0]!;
    if (r.total === 0 || r.unstarted !== r.total) return { outcome: 'started', status: e.status };
    if ('cancel' in change) {
      const moved = await t.query(`UPDATE emails SET status = 'CANCELED' WHERE seq = $1 AND status = $2`, [
        e.seq,
        CHANGEABLE_STATUS,
      ]);
      if (moved.rowCount !== 1) return { outcome: 'started', status: e.status };
      await t.query(
        "UPDATE recipients SET status = 'CANCELED', next_attempt_at = NULL, updated_at = $2 WHERE email_seq = $1",
        [e.seq, now],
      );
      // After the status: the webhook outbox trigger reads the email's status into the event.
      await t.query(
        "INSERT INTO email_events (id, email_seq, type, data, created_at) VALUES ($1, $2, 'canceled', '{}', $3)",
        [change.cancel.eventId, e.seq, now],
      );
      return { outcome: 'done', status: 'CANCELED', scheduled_at: e.scheduled_at };
    }
    await t.query('UPDATE recipients SET next_attempt_at = $2, updated_at = $3 WHERE email_seq = $1', [
      e.seq,
      change.at,
      now,
    ]);
    await t.query('UPDATE emails SET scheduled_at = $2 WHERE seq = $1', [e.seq, change.at]);
    return { outcome: 'done', status: e.status, scheduled_at: change.at };
  }

  return {
    acceptEmail: (e: NewEmail, recipients: Recipient[], opts: AcceptOptions) =>
      tx.write((t) => accept(t, e, recipients, opts)),
    changeSchedule,
    acceptEmails: (items: readonly AcceptItem[]) =>
      Promise.allSettled(tx.writeTogether(items.map((i) => (t: PgTx) => accept(t, i.email, i.recipients, i.opts)))),
    resendEmail: (e: NewEmail, recipients: Recipient[], opts: AcceptOptions, audited: (r: SendResponse) => Audited) =>
      tx.write(async (t) => {
        const { response } = await accept(t, e, recipients, opts);
        const a = audited(response);
        await deps.audit.record(t, a.actor, a.entry, a.atMs);
        return response;
      }),
    suppressionOf: async (projectId: string, address: string): Promise<string | null> =>
      (await deps.suppressions.find(projectId, address.toLowerCase()))?.reason ?? null,
    dropContentBefore: (cutoff: string, page: RetentionPage) =>
      retentionBatch(
        cutoff,
        page,
        async (t, seq) =>
          deleted(await t.query('DELETE FROM email_bodies WHERE email_seq = $1', [seq])) +
          deleted(await t.query('DELETE FROM attachments WHERE email_seq = $1', [seq])),
      ),
    deleteBefore: (cutoff: string, page: RetentionPage) =>
      retentionBatch(cutoff, page, async (t, seq) =>
        deleted(await t.query('DELETE FROM emails WHERE seq = $1', [seq])),
      ),
    listAttachments: async (seq: number) =>
      (
        await pool.query<Attachment>(
          'SELECT filename, content_type, content, content_id FROM attachments WHERE email_seq = $1 ORDER BY position',
          [seq],
        )
      ).rows,
    listAttachmentInfo: async (seq: number) =>
      (
        await pool.query<AttachmentInfo>(
          'SELECT filename, content_type, size, content_id FROM attachments WHERE email_seq = $1 ORDER BY position',
          [seq],
        )
      ).rows,
    list,
    findIdempotent: async (projectId: string, key: string, hash: string, nowIso: string) => {
      const prior = await deps.idempotency.find(projectId, key, nowIso);
      return prior && replayOf(prior, hash);
    },
    findById: async (id: string) =>
      (
        await pool.query<EmailRow>(
          'SELECT e.*, b.html_body, b.text_body, b.raw_message FROM emails e LEFT JOIN email_bodies b ON b.email_seq = e.seq WHERE e.id = $1',
          [id],
        )
      ).rows[0],
    listEvents: async (seq: number) =>
      (
        await pool.query<EventRow>(
          'SELECT id, type, data, ip_address, user_agent, created_at FROM email_events WHERE email_seq = $1 ORDER BY seq',
          [seq],
        )
      ).rows,
  };
}

/** The old name of the emails store on PostgreSQL, for the tests that build one. */
export type PgEmailsRepo = EmailsStore;
