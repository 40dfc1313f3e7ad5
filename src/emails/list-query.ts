// The emails list query, built once for both stores (issue 30, item 3: "a list-query builder
// parameterised by dialect"). Each store looks up the cursor and runs the statement; what the
// page holds and in which order is decided here.
import type { ListQuery } from './schema.ts';

/** What differs between the two SQL dialects in the list query. */
export interface ListDialect {
  /** The placeholder of the `n`th parameter (from 1). */
  placeholder(n: number): string;
  /** The condition that the email's sender is the address in parameter `p`, without regard to case. */
  senderIs(p: string): string;
  /**
   * The condition that the subject holds `text`, ASCII letters without regard to case and every
   * other character as written; `param` adds a parameter and gives its placeholder.
   */
  subjectHas(text: string, param: (v: unknown) => string): string;
  /** The condition that the email's metadata holds `value` under `key` (a checked key: letters, digits, _ and -). */
  metadataIs(key: string, value: string, param: (v: unknown) => string): string;
}

const ASCII_UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * SQLite's LIKE folds ASCII letters only (no ICU in better-sqlite3's build), as wanted. It reads
 * the subject from the covering index (project_id, seq, subject) of migration 0024 and folds
 * without a copy: a scan of a million subjects takes about 0.1 s, against 1 s for
 * instr(lower(subject)) over the rows (bench:dashboard). A scan holds SQLite's one thread, so
 * it must be cheap there.
 */
export const SQLITE_LIST: ListDialect = {
  // `+?`: a bare parameter makes SQLite re-prepare the statement each time a value is bound (and
  // better-sqlite3 compile a new builder for its 46 columns), on every page; the plans are the
  // same (decisions.md, "Bound values stay out of the query plan on hot statements").
  placeholder: () => '+?',
  senderIs: (p) => `e.from_email = ${p} COLLATE NOCASE`,
  subjectHas: (text, param) => `e.subject LIKE ${param(`%${text.replace(/[\\%_]/g, '\\$&')}%`)} ESCAPE '\\'`,
  metadataIs: (key, value, param) => `json_extract(e.metadata, ${param(`$."${key}"`)}) = ${param(value)}`,
};

/**
 * A sender is compared through the index on lower(from_email). PostgreSQL's lower() and ILIKE
 * follow the database's locale, so the subject is folded by translate() to give SQLite's answers
 * exactly. No index holds the subject here (a b-tree entry must stay under 2.7 KB, and a subject
 * of 998 characters may not): a scan reads the rows, on one pool connection, while the process
 * serves everything else.
 */
export const PG_LIST: ListDialect = {
  placeholder: (n) => `$${n}`,
  senderIs: (p) => `lower(e.from_email) = lower(${p})`,
  subjectHas: (text, param) =>
    `strpos(translate(e.subject, '${ASCII_UPPER}', '${ASCII_UPPER.toLowerCase()}'), ${param(foldAscii(text))}) > 0`,
  metadataIs: (key, value, param) => `(e.metadata::jsonb ->> ${param(key)}) = ${param(value)}`,
};

/** `text` with its ASCII letters lower-cased and every other character kept, as SQLite's LIKE folds. */
export function foldAscii(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** The email a `before`/`after` cursor names, as the store found it in the project. */
export interface ListCursor {
  seq: number;
  created_at: string;
}

/** A statement of the list and its positional parameters; `reverse` the rows it returns. */
export interface ListStatement {
  sql: string;
  params: unknown[];
  /** `after` pages toward newer emails: walked up from the cursor, the page is reversed to show newest first. */
  reverse: boolean;
}

/**
 * A page of the project's emails, newest first. Two steps, so its cost does not grow with the
 * emails stored (bench:stats): the page's seqs first, from an index alone, then those rows
 * (sorting whole rows to keep 25 reads every body among them). With a tag the page walks down
 * the tag's own primary key (email_tags: project_id, tag, email_seq) instead of listing every
 * email with it; with a date window it walks down (project, created_at) from the window's
 * end, newest by `created_at` then `seq`, and the cursor follows that order.
 *
 * The dashboard's filters (issue 31): the API key and the source walk their own indexes
 * (project, api_key_id, seq) and (project, source, seq); a subject is a substring, which no
 * b-tree can seek, so it is checked on each email the other filters leave, newest first, until
 * the page is full.
 */
export function emailsListStatement(
  d: ListDialect,
  projectId: string,
  q: ListQuery,
  cursor: ListCursor | undefined,
): ListStatement {
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return d.placeholder(params.length);
  };
  const where = [`e.project_id = ${p(projectId)}`];
  const byTag = q.tag !== undefined;
  const byTime = !byTag && (q.from !== undefined || q.to !== undefined);
  const seqCol = byTag ? 't.email_seq' : 'e.seq';
  if (q.status) where.push(`e.status = ${p(q.status)}`);
  if (q.from_email) where.push(d.senderIs(p(q.from_email)));
  if (q.to_email) {
    where.push(
      `${seqCol} IN (SELECT email_seq FROM recipients WHERE project_id = ${p(projectId)} AND address_lc = ${p(q.to_email.toLowerCase())})`,
    );
  }
  if (q.tag) where.push(`t.project_id = ${p(projectId)} AND t.tag = ${p(q.tag)}`);
  if (q.api_key_id) where.push(`e.api_key_id = ${p(q.api_key_id)}`);
  if (q.source) where.push(`e.source = ${p(q.source)}`);
  if (q.subject) where.push(d.subjectHas(q.subject, p));
  if (q.metadata) {
    // A scan of the project's emails the other filters leave, as a subject's (no index holds metadata).
    const colon = q.metadata.indexOf(':');
    where.push(d.metadataIs(q.metadata.slice(0, colon), q.metadata.slice(colon + 1), p));
  }
  if (q.from) where.push(`e.created_at >= ${p(new Date(q.from).toISOString())}`);
  if (q.to) where.push(`e.created_at <= ${p(new Date(q.to).toISOString())}`);
  if (cursor) {
    const op = q.before ? '<' : '>';
    where.push(
      byTime
        ? `(e.created_at, e.seq) ${op} (${p(cursor.created_at)}, ${p(cursor.seq)})`
        : `${seqCol} ${op} ${p(cursor.seq)}`,
    );
  }
  const dir = q.after ? 'ASC' : 'DESC';
  const order = byTime ? `e.created_at ${dir}, e.seq ${dir}` : `${seqCol} ${dir}`;
  const from = byTag ? 'email_tags t JOIN emails e ON e.seq = t.email_seq' : 'emails e';
  const page = `SELECT ${seqCol} FROM ${from} WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${p(q.limit)}`;
  const sql = `SELECT e.* FROM emails e WHERE e.seq IN (${page}) ORDER BY ${byTime ? order : `e.seq ${dir}`}`;
  return { sql, params, reverse: q.after !== undefined };
}
