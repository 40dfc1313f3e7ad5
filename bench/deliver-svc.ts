// svc's side of bench:deliver: a data dir prepared in-process (owner, verified
// signing domain with an RSA-2048 DKIM key, LIVE key), `svc serve` as a child
// process, the ~5 KB email, and the read-only status count afterwards.
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID, type KeyObject } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config/load.ts';
import { initialize } from '../src/accounts/index.ts';
import { buildMessage } from '../src/delivery/mime.ts';
import { returnPathAddress } from '../src/delivery/return-path.ts';
import type { DeliveryJob } from '../src/delivery/job.ts';
import { bundleInto } from '../scripts/bundle.ts';
import { freePort, ROOT, untilHealthy } from './lib.ts';
import { insertSigningDomain } from '../test/signing-domain.ts';
import { track } from './deliver-peers.ts';
import { startDnsServer, type DnsServer } from '../test/peers/dns.ts';

export const SENDER_DOMAIN = 'sender.test';
export const DEST_DOMAIN = 'dest.test';
export const SELECTOR = 'bench1';

/**
 * A ~5 KB transactional email (html + text, 3 recipients at one domain, so one
 * SMTP transaction with 3 RCPT per email); `n` varies the order number and the
 * recipients' local parts.
 */
export function emailBody5k(n: number): Record<string, unknown> {
  const order = 100_000 + n;
  const items = Array.from(
    { length: 9 },
    (_, i) =>
      `<tr><td style="padding:4px 8px">Item ${i + 1}: Trail running shoes, size ${38 + i}, colour slate grey</td>` +
      `<td style="padding:4px 8px;text-align:right">${i + 1} × €${(19.9 + i * 7).toFixed(2)}</td></tr>`,
  ).join('\n');
  const html =
    `<!doctype html><html><head><meta charset="utf-8"><title>Order #${order}</title></head>` +
    `<body style="font-family:Helvetica,Arial,sans-serif;color:#222;max-width:600px;margin:0 auto">\n` +
    `<h1 style="font-size:20px">Your order #${order} has shipped</h1>\n` +
    `<p>Hi Alice,</p><p>Good news: your order <b>#${order}</b> is on its way. It left our warehouse this ` +
    `morning and should arrive within 2-3 business days. You can follow it at any time from your account.</p>\n` +
    `<table style="border-collapse:collapse;width:100%">\n${items}\n</table>\n` +
    `<p>Shipping address: Alice Example, 12 Harbour Street, Apartment 4B, 1011 AB Amsterdam, Netherlands.</p>\n` +
    `<p>Track it any time: <a href="https://shop.example.com/orders/track?o=${order}">shop.example.com/orders</a></p>\n` +
    `<p>Questions about your order? Reply to this email or visit our help centre at ` +
    `<a href="https://help.example.com/">help.example.com</a>; we answer within one business day.</p>\n` +
    `<p>Thanks for shopping with us,<br>The Acme team</p>\n` +
    `<p style="font-size:11px;color:#888">Acme Shop B.V., Keizersgracht 1, Amsterdam. You receive this email ` +
    `because you placed an order at shop.example.com. This is a transactional message about your order.</p>` +
    `</body></html>`;
  const text =
    `Hi Alice,\n\nGood news: your order #${order} is on its way. It left our warehouse this morning and should ` +
    `arrive within 2-3 business days.\n\n` +
    Array.from({ length: 9 }, (_, i) => `  ${i + 1} x Trail running shoes, size ${38 + i}, slate grey`).join('\n') +
    `\n\nShipping address: Alice Example, 12 Harbour Street, Apartment 4B, 1011 AB Amsterdam, Netherlands.\n\n` +
    `Track it any time: https://shop.example.com/orders/track?o=${order}\n\n` +
    `Questions? Reply to this email or visit https://help.example.com/\n\nThanks for shopping with us,\nThe Acme team\n`;
  return {
    from: `notifications@${SENDER_DOMAIN}`,
    from_name: 'Acme Shop',
    to: [`alice${n}@${DEST_DOMAIN}`, `bob${n}@${DEST_DOMAIN}`, `carol.smith${n}@${DEST_DOMAIN}`],
    subject: `Your order #${order} has shipped`,
    html,
    text,
    tags: ['order-shipped'],
  };
}

/**
 * The message svc would put on the wire for emailBody5k(n) (same composer, same
 * DKIM signer): written to a file, it is what smtp-source sends to Postfix.
 */
export async function wireMessage(n: number, key: KeyObject): Promise<Buffer> {
  const b = emailBody5k(n) as {
    from: string;
    from_name: string;
    to: string[];
    subject: string;
    html: string;
    text: string;
  };
  const id = randomUUID();
  const job: DeliveryJob = {
    email_id: id,
    destination: DEST_DOMAIN,
    recipients: b.to,
    envelope_from: returnPathAddress(Buffer.alloc(32), id, b.to[0]!, SENDER_DOMAIN),
    return_paths: null,
    message_id: `${id}@bench.svc.test`,
    date: new Date().toISOString(),
    from_email: b.from,
    from_name: b.from_name,
    to: b.to,
    cc: null,
    reply_to: null,
    subject: b.subject,
    html: b.html,
    text: b.text,
    headers: {},
    attachments: [],
    dkim: {
      domain: SENDER_DOMAIN,
      selector: SELECTOR,
      privateKeyPem: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
  };
  return buildMessage(job);
}

/**
 * The loopback DNS server of the delivery benchmarks: the destination's MX, and the
 * sending domain's DKIM and SPF records, so svc's periodic domain check finds them
 * (bench.svc.test is --hostname).
 */
export async function startBenchDns(dkimPublic: KeyObject): Promise<DnsServer> {
  const dns = await startDnsServer();
  dns.set(DEST_DOMAIN, { MX: [{ exchange: `mx.${DEST_DOMAIN}`, priority: 10 }] });
  dns.set(`mx.${DEST_DOMAIN}`, { A: ['127.0.0.1'] });
  dns.set(`${SELECTOR}._domainkey.${SENDER_DOMAIN}`, {
    TXT: [`v=DKIM1; k=rsa; p=${dkimPublic.export({ type: 'spki', format: 'der' }).toString('base64')}`],
  });
  dns.set(SENDER_DOMAIN, { TXT: ['v=spf1 a:bench.svc.test ~all'] });
  // Where svc's envelope sender is (bounces+…@bounces.<domain>), so its checks pass and say nothing.
  dns.set(`bounces.${SENDER_DOMAIN}`, {
    TXT: ['v=spf1 a:bench.svc.test ~all'],
    MX: [{ exchange: 'bench.svc.test', priority: 10 }],
  });
  dns.set('bench.svc.test', { A: ['127.0.0.1'] });
  return dns;
}

/** The benchmarks' owner, organization (UNLIMITED, DPA signed) and project. */
export function initializeBench(app: App) {
  return initialize(app.accounts, app.keys, {
    email: 'owner@example.com',
    password: 'bench-password-123',
    org: 'Bench',
    project: 'Bench',
    plan: 'UNLIMITED',
    acceptDpa: true,
  });
}

/** A data dir with an owner, a verified signing domain bound to the project, and a LIVE key. */
export async function prepareDataDir(
  dataDir: string,
  key: { privateKey: KeyObject; publicKey: KeyObject },
): Promise<string> {
  const app = await createApp(loadConfig({ env: {}, flags: { dataDir } }), { createDataDir: true });
  try {
    const init = await initializeBench(app);
    insertSigningDomain(app.db, {
      organizationId: init.organization_id,
      projectId: init.project_id,
      name: SENDER_DOMAIN,
      selector: SELECTOR,
      key,
    });
    const k = await app.keys.createKey(init.project_id, { name: 'bench', env: 'LIVE' });
    return k.key!;
  } finally {
    await app.close();
  }
}

/**
 * BENCH_DIST=1: svc runs under plain node from a bundle made by scripts/bundle.ts
 * (the esbuild step of `npm run build`, minus the pkg step) in .bench-tmp/deliver-dist/. Returns the path of main.js and a
 * function that removes the bundle.
 */
export async function buildDist(): Promise<{ main: string; remove: () => void }> {
  const dir = join(ROOT, '.bench-tmp', 'deliver-dist');
  const main = await bundleInto(dir);
  return { main, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface SvcProcess {
  pid: number;
  url: string;
  child: ChildProcess;
  /** SIGTERM and wait for a clean close (SIGKILL after 30 s). */
  stop(): Promise<number | null>;
}

/** `node src/main.ts serve …` (plain node, type stripping), or the bundle's main.js, on a prepared data dir. */
export async function startSvc(opts: {
  /** main.js of a bundle (BENCH_DIST=1); src/main.ts by default. */
  entry?: string | undefined;
  /** The single executable to run instead of node (BENCH_EXE=1); `nodeArgs` reach it as NODE_OPTIONS. */
  executable?: string | undefined;
  dataDir: string;
  dnsServer: string;
  mxPort: number;
  nodeArgs: string[];
  extraArgs: string[];
}): Promise<SvcProcess> {
  const port = await freePort();
  const args = opts.executable ? [] : [...opts.nodeArgs, opts.entry ?? join(ROOT, 'src/main.ts')];
  args.push('serve', '--data-dir', opts.dataDir);
  args.push('--http-port', String(port), '--smtp-port', '0', '--dns-servers', opts.dnsServer);
  args.push('--mx-port', String(opts.mxPort), '--hostname', 'bench.svc.test', '--log-level', 'warn');
  args.push('--log-format', 'json', ...opts.extraArgs);
  const stdio = ['ignore', 'inherit', 'inherit'] as const;
  const child = track(
    opts.executable
      ? spawn(opts.executable, args, {
          cwd: ROOT,
          stdio: [...stdio],
          env: { ...process.env, NODE_OPTIONS: opts.nodeArgs.join(' ') },
        })
      : spawn(process.execPath, args, { cwd: ROOT, stdio: [...stdio] }),
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));
  const url = `http://127.0.0.1:${port}`;
  await untilHealthy(url, exited);
  return {
    pid: child.pid!,
    url,
    child,
    async stop() {
      if (!gone) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Emails and recipients by status, read-only (safe while svc runs: WAL). */
export function statusCounts(dataDir: string): { emails: Record<string, number>; recipients: Record<string, number> } {
  const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const by = (table: string) =>
      Object.fromEntries(
        (
          db.prepare(`SELECT status, count(*) AS n FROM ${table} GROUP BY status`).all() as {
            status: string;
            n: number;
          }[]
        ).map((r) => [r.status, r.n]),
      );
    return { emails: by('emails'), recipients: by('recipients') };
  } finally {
    db.close();
  }
}
