// The floor of bench/accept.ts, run as its own child process: the least a
// durable accept can cost on this machine. A bare node:http server that parses
// the JSON body, checks a few fields by hand and commits one row per request
// through svc's own group committer (src/store/committer.ts) on a database
// opened by svc's own openDatabase (WAL, synchronous=FULL,
// wal_autocheckpoint=0, checkpoints from a worker thread). No fastify, no zod,
// no auth lookup, no recipient/event rows: one 1 KB row per request.
//
//   node --import tsx bench/floor-server.ts <data-dir>
// prints one JSON line {"port":N,"key":"..."} once listening; SIGTERM stops it.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { openDatabase } from '../src/store/db.ts';
import { createCommitter } from '../src/store/committer.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: floor-server.ts <data-dir>');

const store = openDatabase(dataDir, { checkpointWorker: true });
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

function handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
  if (req.headers.authorization !== bearer) return reply(res, 401, { error: { code: 'unauthorized' } });
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return reply(res, 400, { error: { code: 'invalid_json' } });
  }
  const { from, to, subject, html, text } = body;
  const ok =
    isAddress(from) &&
    Array.isArray(to) &&
    to.length >= 1 &&
    to.length <= 50 &&
    to.every(isAddress) &&
    typeof subject === 'string' &&
    (typeof html === 'string' || typeof text === 'string');
  if (!ok) return reply(res, 422, { error: { code: 'request_validation_failed' } });
  const id = randomUUID();
  const createdAt = new Date().toISOString();
  tx.write(() => insert.run(id, from, JSON.stringify(to), subject, raw, createdAt)).then(
    () => reply(res, 202, { data: { id, status: 'SIMULATED', skipped_recipients: [] } }),
    () => reply(res, 500, { error: { code: 'internal_error' } }),
  );
}

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/emails') return reply(res, 404, { error: { code: 'not_found' } });
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
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
