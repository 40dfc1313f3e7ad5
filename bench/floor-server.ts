// The floor of bench/accept.ts and bench/batch.ts, run as its own child
// process: the least a durable accept can cost on this machine. A bare
// node:http server that parses the JSON body, checks a few fields by hand and
// commits one row per email through svc's own group committer
// (src/store/committer.ts) on a database opened by svc's own openDatabase (WAL,
// synchronous=FULL, wal_autocheckpoint=0, checkpoints from a worker thread). No
// fastify, no zod, no auth lookup, no recipient/event rows: one 1 KB row per
// email (POST /v1/emails), or one row per item of POST /v1/emails/batch, all of
// a batch in one write.
//
//   node --import tsx bench/floor-server.ts <data-dir>
// prints one JSON line {"port":N,"key":"..."} once listening; SIGTERM stops it.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { openDatabase } from '../src/store/db.ts';
import { createCommitter } from '../src/store/committer.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: floor-server.ts <data-dir>');

const store = openDatabase(dataDir, { checkpointWorker: true, create: true });
const db = store.db;
db.exec(`CREATE TABLE IF NOT EXISTS floor_emails (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  from_email TEXT NOT NULL,
  to_emails TEXT NOT NULL,
  subject TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL
)`);
const tx = createCommitter(db);
const insert = db.prepare(
  'INSERT INTO floor_emails (id, from_email, to_emails, subject, body, created_at) VALUES (?, ?, ?, ?, ?, ?)',
);
const key = 'svc_test_floor_' + randomBytes(16).toString('base64url');
const bearer = `Bearer ${key}`;

const isAddress = (v: unknown): v is string => typeof v === 'string' && v.length <= 320 && v.indexOf('@') > 0;

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** The hand check of one email: the few fields svc's schema would refuse first. */
function valid(body: Record<string, unknown>): boolean {
  const { from, to, subject, html, text } = body;
  return (
    isAddress(from) &&
    Array.isArray(to) &&
    to.length >= 1 &&
    to.length <= 50 &&
    to.every(isAddress) &&
    typeof subject === 'string' &&
    (typeof html === 'string' || typeof text === 'string')
  );
}

function parse(raw: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
  if (req.headers.authorization !== bearer) return reply(res, 401, { error: { code: 'unauthorized' } });
  const body = parse(raw);
  if (!body) return reply(res, 400, { error: { code: 'invalid_json' } });
  if (!valid(body)) return reply(res, 422, { error: { code: 'request_validation_failed' } });
  const id = randomUUID();
  const createdAt = new Date().toISOString();
  tx.write(() => insert.run(id, body.from, JSON.stringify(body.to), body.subject, raw, createdAt)).then(
    () => reply(res, 202, { data: { id, status: 'SIMULATED', skipped_recipients: [] } }),
    () => reply(res, 500, { error: { code: 'internal_error' } }),
  );
}

function handleBatch(req: IncomingMessage, res: ServerResponse, raw: string): void {
  if (req.headers.authorization !== bearer) return reply(res, 401, { error: { code: 'unauthorized' } });
  const emails = parse(raw)?.emails;
  if (!Array.isArray(emails)) return reply(res, 400, { error: { code: 'invalid_json' } });
  if (emails.length < 1 || emails.length > 100 || !emails.every((e) => e && typeof e === 'object' && valid(e)))
    return reply(res, 422, { error: { code: 'request_validation_failed' } });
  const createdAt = new Date().toISOString();
  const rows = (emails as Record<string, unknown>[]).map((e) => ({ id: randomUUID(), e }));
  tx.write(() => {
    for (const { id, e } of rows) insert.run(id, e.from, JSON.stringify(e.to), e.subject, e.html ?? e.text, createdAt);
  }).then(
    () =>
      reply(res, 202, {
        data: {
          results: rows.map(({ id }, index) => ({
            index,
            id,
            status: 'SIMULATED',
            skipped_recipients: [],
            error: null,
          })),
          accepted_count: rows.length,
          failed_count: 0,
        },
      }),
    () => reply(res, 500, { error: { code: 'internal_error' } }),
  );
}

const routes: Record<string, typeof handle> = { '/v1/emails': handle, '/v1/emails/batch': handleBatch };

const server = createServer((req, res) => {
  const route = req.method === 'POST' ? routes[req.url ?? ''] : undefined;
  if (!route) return reply(res, 404, { error: { code: 'not_found' } });
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => route(req, res, Buffer.concat(chunks).toString('utf8')));
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(JSON.stringify({ port, key }) + '\n');
});

await new Promise<void>((resolve) => {
  process.once('SIGTERM', () => resolve());
  process.once('SIGINT', () => resolve());
});
const keepAlive = setInterval(() => {}, 1000);
await new Promise<void>((resolve) => server.close(() => resolve()));
tx.close();
await store.close();
clearInterval(keepAlive);
