// What both stores' receiving SQL shares: the columns of a received message and the list's filter.
import type { ReceivedFilter } from './store.ts';

export const RECEIVED_COLUMNS =
  'id, project_id, route_id, action, outcome, detail, forwarded_email_id, mail_from, rcpt_to, remote_ip, helo, ' +
  'from_email, to_emails, subject, message_id, size, auth, received_at';

/**
 * The list's conditions after the project's (each starting with AND) and their values, in the
 * order `param(i)` numbers them: both stores build the same query with their own placeholders.
 */
export function receivedWhere(f: ReceivedFilter, param: (i: number) => string): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const p = (v: unknown) => (params.push(v), param(params.length - 1));
  const where: string[] = [];
  if (f.route_id) where.push(`route_id = ${p(f.route_id)}`);
  if (f.outcome) where.push(`outcome = ${p(f.outcome)}`);
  if (f.from) where.push(`received_at >= ${p(f.from)}`);
  if (f.to) where.push(`received_at <= ${p(f.to)}`);
  if (f.q) {
    // A substring without regard to ASCII case; LIKE's wildcards in it are taken literally.
    const like = `%${f.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const v = p(like);
    where.push(
      `(lower(coalesce(from_email, '')) LIKE ${v} ESCAPE '\\' OR lower(subject) LIKE ${v} ESCAPE '\\' ` +
        `OR lower(rcpt_to) LIKE ${v} ESCAPE '\\')`,
    );
  }
  if (f.before) where.push(`seq < (SELECT seq FROM received_emails WHERE id = ${p(f.before)})`);
  return { where: where.map((c) => `AND ${c}`).join(' '), params };
}
