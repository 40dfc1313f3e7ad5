// The data dir of bench:stats: made with the real migrations, filled with SQL (bench/stats.ts).

import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { initialize } from '../src/accounts/index.ts';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { newId } from '../src/lib/ids.ts';
import { emailBody, env, fmt, tempDir } from './lib.ts';

export const DAYS = env.num('BENCH_DAYS', 90);
export const PASSWORD = 'bench-password-123';
const DAY = 86_400_000;
const NOW = Date.now();
const iso = (t: number) => new Date(t).toISOString();

export interface Dataset {
  size: number;
  dataDir: string;
  orgId: string;
  projectId: string;
  key: string;
  /** Samples for the requests: email ids, recipient addresses. */
  ids: string[];
  addresses: string[];
  fillSeconds: number;
  dbMb: number;
  statsRows: number;
}

// ---------------------------------------------------------------------------
// The data dir.

export async function prepare(size: number): Promise<Dataset> {
  const dataDir = tempDir(`stats-${size}`);
  const app = await createApp(loadConfig({ env: {}, flags: { dataDir } }), { createDataDir: true });
  let init: { organization_id: string; project_id: string };
  let key: string;
  try {
    init = await initialize(app.accounts, app.keys, {
      email: 'owner@example.com',
      password: PASSWORD,
      org: 'Bench',
      project: 'Bench',
      plan: 'UNLIMITED',
      acceptDpa: true,
    });
    key = (await app.keys.createKey(init.project_id, { name: 'bench', env: 'TEST' })).key!;
  } finally {
    await app.close();
  }
  const file = join(dataDir, 'svc.sqlite');
  const t0 = performance.now();
  const samples = fill(file, init.project_id, size);
  const fillSeconds = (performance.now() - t0) / 1000;
  const db = new Database(file);
  const statsRows = db.prepare('SELECT count(*) FROM email_stats').pluck().get() as number;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return {
    size,
    dataDir,
    orgId: init.organization_id,
    projectId: init.project_id,
    key,
    ...samples,
    fillSeconds,
    dbMb: statSync(file).size / 1024 / 1024,
    statsRows,
  };
}

/** A cheap unique id for events (nothing looks an event up by its id; migration 0006). */
let eventCounter = 0;
const eventId = () => `00000000-0000-7000-8000-${(++eventCounter).toString(16).padStart(12, '0')}`;

/**
 * `size` emails of one project over the last DAYS days, oldest first (seq follows created_at,
 * as in a real store), every one in a final state so that the delivery engine has nothing to do.
 */
function fill(file: string, projectId: string, size: number): { ids: string[]; addresses: string[] } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const insertEmail = db.prepare(
    `INSERT INTO emails (id, project_id, env, source, status, from_email, from_name, to_emails, subject, tags,
       created_at, sent_at, delivered_at, bounce_type, bounce_category, final_smtp_code,
       final_smtp_text, message_id, dkim_signing_status)
     VALUES (?, ?, 'LIVE', 'API', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'not_signed')`,
  );
  // The bodies have their own table since migration 0018.
  const insertBody = db.prepare('INSERT INTO email_bodies (email_seq, html_body, text_body) VALUES (?, ?, ?)');
  const insertTag = db.prepare('INSERT INTO email_tags (email_seq, project_id, tag) VALUES (?, ?, ?)');
  const insertRecipient = db.prepare(
    `INSERT INTO recipients (email_seq, project_id, address, address_lc, domain, kind, status, attempts, updated_at,
       sent_at, delivered_at) VALUES (?, ?, ?, ?, ?, 'to', ?, 1, ?, ?, ?)`,
  );
  const insertEvent = db.prepare(
    'INSERT INTO email_events (id, email_seq, type, data, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const customers = Math.max(1, Math.floor(size / 20)); // each address gets ~20-30 emails
  const ids: string[] = [];
  const addresses: string[] = [];
  const start = NOW - DAYS * DAY;
  const CHUNK = 20_000;
  for (let lo = 0; lo < size; lo += CHUNK) {
    db.transaction(() => {
      for (let i = lo; i < Math.min(size, lo + CHUNK); i++) {
        const t = start + Math.floor((i * DAYS * DAY) / size);
        const at = iso(t);
        const body = emailBody(i) as { from: string; from_name: string; subject: string; html: string; text: string };
        const to = [`customer${(i * 7919) % customers}@example${i % 7}.com`];
        if (i % 3 === 0) to.push(`billing${(i * 104_729) % customers}@example${i % 5}.org`);
        const bounced = i % 50 === 7;
        const tag = i % 100 === 3 ? 'invoice' : i % 3 === 1 ? 'password-reset' : 'order-shipped';
        const id = newId(t);
        if (i % Math.max(1, Math.floor(size / 1000)) === 0) ids.push(id);
        if (i % Math.max(1, Math.floor(size / 500)) === 1) addresses.push(to[0]!);
        const seq = Number(
          insertEmail.run(
            id,
            projectId,
            bounced ? 'BOUNCED' : 'DELIVERED',
            body.from,
            body.from_name,
            JSON.stringify(to),
            body.subject,
            JSON.stringify([tag]),
            at,
            bounced ? null : iso(t + 2000),
            bounced ? null : iso(t + 2000),
            bounced ? 'hard' : null,
            bounced ? 'invalid-recipient' : null,
            bounced ? 550 : 250,
            bounced ? '5.1.1 User unknown' : '2.0.0 Ok: queued',
            `${id}@bench.svc.test`,
          ).lastInsertRowid,
        );
        insertBody.run(seq, body.html, body.text);
        insertTag.run(seq, projectId, tag);
        insertEvent.run(eventId(), seq, 'queued', '{}', at);
        for (const address of to) {
          const domain = address.slice(address.indexOf('@') + 1);
          const status = bounced ? 'BOUNCED' : 'DELIVERED';
          insertRecipient.run(
            seq,
            projectId,
            address,
            address,
            domain,
            status,
            iso(t + 2000),
            iso(t + 2000),
            iso(t + 2000),
          );
          const data = JSON.stringify({ recipient: address });
          insertEvent.run(eventId(), seq, 'sending', data, iso(t + 1000));
          if (bounced) {
            insertEvent.run(eventId(), seq, 'bounced', data, iso(t + 2000));
            continue;
          }
          insertEvent.run(eventId(), seq, 'sent', data, iso(t + 2000));
          insertEvent.run(eventId(), seq, 'delivered', data, iso(t + 2000));
          if (i % 5 === 0) insertEvent.run(eventId(), seq, 'opened', '{}', iso(t + 600_000));
          if (i % 20 === 0) insertEvent.run(eventId(), seq, 'clicked', '{}', iso(t + 660_000));
        }
      }
    })();
    if (size >= 100_000 && (lo / CHUNK) % 10 === 9) process.stdout.write(`  filled ${fmt(lo + CHUNK)}\r`);
  }
  db.close();
  return { ids, addresses };
}
