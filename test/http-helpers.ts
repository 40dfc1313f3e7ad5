import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DATABASE_FILE } from '../src/store/data-dir.ts';
import { expect } from 'vitest';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { TestEnv } from './harness.ts';

/**
 * Shared pieces of the Public API scenario tests: one request shape, one
 * runner that checks status, error envelope, headers and the rows a request
 * created, so every table-driven case states all of them.
 */

export type Res = LightMyRequestResponse;

/** Tables whose rows a send creates. `usage_counters` counts monthly units (sum of `count`), not rows. */
export const TABLES = [
  'emails',
  'recipients',
  'email_events',
  'attachments',
  'usage_counters',
  'idempotency_keys',
] as const;
export type Table = (typeof TABLES)[number];
export type Rows = Record<Table, number>;

export const NOTHING: Rows = {
  emails: 0,
  recipients: 0,
  email_events: 0,
  attachments: 0,
  usage_counters: 0,
  idempotency_keys: 0,
};

export async function snapshot(env: TestEnv): Promise<Rows> {
  const one = async (sql: string) => Number((await env.query<{ n: number | string }>(sql))[0]!.n);
  const rows = Object.fromEntries(
    await Promise.all(
      TABLES.map(async (t) => [t, t === 'usage_counters' ? 0 : await one(`SELECT count(*) AS n FROM ${t}`)]),
    ),
  ) as Rows;
  rows.usage_counters = await one('SELECT coalesce(sum(count), 0) AS n FROM usage_counters WHERE length(period) = 7');
  return rows;
}

export async function delta(env: TestEnv, before: Rows): Promise<Rows> {
  const now = await snapshot(env);
  return Object.fromEntries(TABLES.map((t) => [t, now[t] - before[t]])) as Rows;
}

export interface Req {
  method?: InjectOptions['method'];
  url?: string;
  /** Bearer token; null sends no Authorization header. */
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
}

export async function call(env: TestEnv, key: string | null, req: Req = {}): Promise<Res> {
  const token = req.key === undefined ? key : req.key;
  const headers: Record<string, string> = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...req.headers };
  const method = req.method ?? (req.body === undefined ? 'GET' : 'POST');
  const opts: InjectOptions = { method, url: req.url ?? '/v1/emails', headers };
  if (req.body !== undefined) opts.payload = req.body as object;
  return env.server.inject(opts);
}

/** A minimal valid EmailSendRequest with `over` merged in (undefined values remove a field). */
export function email(over: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, unknown> = {
    from: 'sender@example.com',
    to: ['rcpt@example.net'],
    subject: 'Hello',
    text: 'Hello there',
  };
  const out = { ...base, ...over };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

/** `n` distinct addresses at `domain`. */
export function addrs(n: number, prefix = 'r', domain = 'example.net'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}@${domain}`);
}

/** Every response carries X-Request-ID; an error is the contract's envelope with the same id in both places. */
export function expectEnvelope(res: Res): void {
  const id = res.headers['x-request-id'];
  expect(typeof id, 'X-Request-ID header').toBe('string');
  expect(String(id).length).toBeGreaterThan(0);
  if (res.statusCode < 400) return;
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['error', 'request_id']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message', 'request_id']);
  expect(typeof body.error.code).toBe('string');
  expect(typeof body.error.message).toBe('string');
  expect(body.error.details === null || typeof body.error.details === 'object').toBe(true);
  expect(body.request_id).toBe(id);
  expect(body.error.request_id).toBe(id);
}

/** Asserts an error response and returns its `error` object. */
export function expectError(res: Res, status: number, code: string, details?: Record<string, unknown>) {
  expect(res.statusCode, res.body).toBe(status);
  expectEnvelope(res);
  const error = res.json().error;
  expect(error.code).toBe(code);
  if (details) expect(error.details).toMatchObject(details);
  return error as { code: string; message: string; details: Record<string, unknown> | null };
}

/** The `field` paths of a request_validation_failed response, each with a message and a code. */
export function fieldsOf(res: Res): string[] {
  const fields = res.json().error.details.fields as { field: string; message: string; code: string }[];
  for (const f of fields) {
    expect(typeof f.message).toBe('string');
    expect(f.message.length).toBeGreaterThan(0);
    expect(typeof f.code).toBe('string');
  }
  return fields.map((f) => f.field);
}

export interface Case extends Req {
  name: string;
  status: number;
  /** Error code; required when status >= 400. */
  code?: string;
  /** Subset of error.details. */
  details?: Record<string, unknown>;
  /** For request_validation_failed: field paths that must be among details.fields. */
  fields?: string[];
  /** Response headers: a string or RegExp must match, null must be absent. */
  resHeaders?: Record<string, string | RegExp | null>;
  /** Rows the request must create; an error response or a GET defaults to NOTHING. */
  rows?: Partial<Rows>;
  check?: (res: Res, env: TestEnv) => void | Promise<void>;
  /** A success body that is not wrapped in `data` (the OpenAPI document). */
  raw?: boolean;
}

/** Runs one table case against `env` with `key` as the default bearer token. */
export async function runCase(env: TestEnv, key: string | null, c: Case): Promise<Res> {
  const before = await snapshot(env);
  const res = await call(env, key, c);
  expect(res.statusCode, res.body).toBe(c.status);
  expectEnvelope(res);
  if (c.status >= 400) {
    expectError(res, c.status, c.code ?? '(missing code in case)', c.details);
  } else if (!c.raw) {
    expect(Object.keys(res.json())).toEqual(['data']);
  }
  if (c.fields) expect(fieldsOf(res)).toEqual(expect.arrayContaining(c.fields));
  for (const [name, want] of Object.entries(c.resHeaders ?? {})) {
    const got = res.headers[name.toLowerCase()];
    if (want === null) expect(got, name).toBeUndefined();
    else if (want instanceof RegExp) expect(String(got), name).toMatch(want);
    else expect(got, name).toBe(want);
  }
  // A rejected request and a read create nothing.
  const readOnly = (c.method ?? (c.body === undefined ? 'GET' : 'POST')) === 'GET';
  const rows = c.rows ?? (c.status >= 400 || readOnly ? NOTHING : undefined);
  if (rows) expect(await delta(env, before)).toMatchObject(rows);
  await c.check?.(res, env);
  return res;
}

/** Base64 of `bytes` bytes (a repeated pattern, cheap to build at any size). */
export function b64(bytes: number): string {
  return Buffer.alloc(bytes, 'abc').toString('base64');
}

/** The first row of a query with `?` placeholders, on whichever store runs. */
export async function row<T>(env: TestEnv, sql: string, ...params: unknown[]): Promise<T> {
  return (await env.query<T>(sql, ...params))[0]!;
}

/** The rows of a query with `?` placeholders, on whichever store runs. */
export function rows<T>(env: TestEnv, sql: string, ...params: unknown[]): Promise<T[]> {
  return env.query<T>(sql, ...params);
}

/**
 * Writes as another process would (`svc keys revoke` beside the server): a second connection to
 * the file on SQLite; on PostgreSQL, the harness's own pool.
 */
export function elsewhere(e: TestEnv) {
  if (e.store === 'postgres') {
    return { run: async (sql: string, ...p: unknown[]) => void (await e.query(sql, ...p)), close: () => {} };
  }
  const db = new Database(join(e.app.config.dataDir, DATABASE_FILE));
  db.pragma('foreign_keys = ON');
  const run = (sql: string, ...p: unknown[]) => Promise.resolve(void db.prepare(sql).run(...p));
  return { run, close: () => db.close() };
}
