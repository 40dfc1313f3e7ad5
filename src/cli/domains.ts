import { hostnameProblem, type Domain, type DomainsService } from '../domains/index.ts';
import { reportDaysQuerySchema, type ReportDay } from '../inbound/index.ts';
import { parseInput } from '../validation.ts';
import { withApp, type GlobalOptions } from './context.ts';
import { EXIT_FAILED, print, table, UsageError } from './io.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * Opens the store with withApp, also honouring --dns-servers and --hostname
 * (or SVC_DNS_SERVERS, SVC_HOSTNAME, the config file): the records shown and
 * checked name the server's host, and `verify` asks the resolver the server uses.
 */
async function withDomains<T>(opts: Opts, fn: (domains: DomainsService, hostname: string) => Promise<T>): Promise<T> {
  const flags = { dnsServers: str(opts.dnsServers), hostname: str(opts.hostname) };
  return withApp(opts, (app) => fn(app.domains, app.hostname), { flags });
}

/** The DKIM keys: which signs, which waits for its record, which retires when. */
function keyLines(d: Domain): string[] {
  return d.dkim_keys.map((k) => {
    const when = k.state === 'retiring' ? ` until ${k.retire_after ?? '-'}` : '';
    const note = k.state === 'pending' ? ': publish its record; svc switches to it once verify sees it' : '';
    return `  ${k.selector} ${k.algorithm} ${k.state}${when}${note}`;
  });
}

function checkLines(d: Domain): string[] {
  if (d.checks.length === 0) return [`Not checked yet: publish the records, then run: svc domains verify ${d.name}`];
  const lines = d.checks.map(
    (c) => `${c.ok ? '✓' : '✗'} ${c.type} ${c.name} (${c.purpose})${c.reason ? `: ${c.reason}` : ''}`,
  );
  const then = d.status === 'PENDING' ? [`Publish what fails above, then run: svc domains verify ${d.name}`] : [];
  return [`What DNS held at ${d.last_checked_at ?? '-'} (DKIM and SPF are required):`, ...lines, ...then];
}

/**
 * A domain as a person reads it: status, warning, the records to publish (SPF
 * and the return path name `hostname`, the server's host) and the latest checks.
 */
export function describeDomain(d: Domain, hostname: string): string {
  return [
    `${d.name}  ${d.status}  (id ${d.id}, DKIM selector ${d.dkim_selector ?? '-'})`,
    ...(d.warning ? [`warning: ${d.warning}`] : []),
    `projects: ${d.project_ids.length > 0 ? d.project_ids.join(', ') : '(not bound)'}`,
    ...(d.receiving
      ? [
          `receiving: on; ${d.receiving_ready ? 'its MX points here' : `publish its MX (10 ${hostname}), then svc domains verify`}` +
            ` (routes: svc routes add --project P --pattern 'support@${d.name}' ...)`,
        ]
      : []),
    'DKIM keys:',
    ...keyLines(d),
    '',
    `Records to publish (SPF and the return path name the server host ${hostname}):`,
    // VALUE last: a DKIM key is ~400 characters and would push PURPOSE off every line.
    table(d.records as never, ['type', 'name', 'purpose', 'value']),
    `SPF goes on bounces.${d.name}, the return path receivers check: an SPF record at ${d.name} stays as it is;`,
    `never add a second v=spf1 there. A DMARC record already published is kept (the checks show its policy).`,
    '',
    ...checkLines(d),
  ].join('\n');
}

/** Runs one domain operation and prints its result, with a warning when its records can never verify. */
const show1 = (opts: Opts, op: (s: DomainsService) => Promise<Domain>) =>
  withDomains(opts, async (s, hostname) => {
    const d = await op(s);
    print(opts, d, () => describeDomain(d, hostname));
    const problem = hostnameProblem(hostname);
    if (problem) process.stderr.write(`warning: ${problem}\n`);
    return d;
  });

export async function add([name]: string[], opts: Opts): Promise<void> {
  const input = {
    name: name!,
    organization: str(opts.org)!,
    project: str(opts.project),
    ed25519: opts.ed25519 === true,
    receiving: opts.receiving === true,
  };
  // Looked up at once: what DNS holds already (an SPF or DMARC record of the domain's) shows now.
  await show1(opts, (s) => s.addDomain(input, undefined, { lookUp: true }));
}

/** Starts a DKIM key rotation and prints the new record(s) to publish; exits 1 while one is under way. */
export async function rotateDkim([name]: string[], opts: Opts): Promise<void> {
  await show1(opts, (s) => s.rotateDkim(name!));
}

/** Changes a domain's settings: `--ed25519 on|off`, `--receiving on|off` (commander allows no other value). */
export async function update([name]: string[], opts: Opts): Promise<void> {
  if (opts.ed25519 === undefined && opts.receiving === undefined) {
    throw new UsageError('name what to change: --ed25519 on|off, --receiving on|off or both');
  }
  await show1(opts, async (s) => {
    let d = opts.ed25519 === undefined ? undefined : await s.setEd25519(name!, opts.ed25519 === 'on');
    if (opts.receiving !== undefined) d = await s.setReceiving(name!, opts.receiving === 'on');
    return d!;
  });
}

export async function show([name]: string[], opts: Opts): Promise<void> {
  await show1(opts, (s) => s.getDomain(name!));
}

export async function list(_args: string[], opts: Opts): Promise<void> {
  const ds = await withDomains(opts, (s) => s.listDomains(str(opts.org)!));
  const rows = ds.map((d) => ({ ...d, warning: d.warning ? 'yes' : null }));
  print(opts, ds, () => table(rows, ['id', 'name', 'status', 'last_checked_at', 'warning', 'project_ids']));
}

/** Exits 0 only when the domain is verified, so a script can wait on it; the status and reasons are the output. */
export async function verify([name]: string[], opts: Opts): Promise<void> {
  const d = await show1(opts, (s) => s.verifyDomain(name!));
  if (d.status === 'VERIFIED') return;
  if (!opts.json) process.stderr.write(`${d.name} is ${d.status}, not verified: see the checks above\n`);
  process.exitCode = EXIT_FAILED;
}

export async function bind([name]: string[], opts: Opts): Promise<void> {
  await show1(opts, (s) => s.bindDomain(name!, str(opts.project)!));
}

export async function unbind([name]: string[], opts: Opts): Promise<void> {
  await show1(opts, (s) => s.unbindDomain(name!, str(opts.project)!));
}

export async function remove([name]: string[], opts: Opts): Promise<void> {
  const d = await withDomains(opts, (s) => s.deleteDomain(name!));
  print(opts, d, () => `deleted domain ${d.name} (${d.id}) and its DKIM key`);
}

/** "pass" when all of a day's messages passed, "fail" when none did, else how many of them. */
const passed = (n: number, of: number) => (n === of ? 'pass' : n === 0 ? 'fail' : `${n}/${of} pass`);

/** svc domains report DOMAIN [--days N]: the DMARC aggregate reports received, per day and source IP. */
export async function report([name]: string[], opts: Opts): Promise<void> {
  const { days } = parseInput(reportDaysQuerySchema, opts.days === undefined ? {} : { days: opts.days });
  const { domain, rows } = await withApp(opts, async (app) => {
    const d = await app.domains.getDomain(name!);
    return { domain: d.name, rows: await app.dmarc.listReportDays(d.id, days) };
  });
  print(opts, rows, () => reportText(domain, days, rows));
}

function reportText(domain: string, days: number, rows: ReportDay[]): string {
  if (rows.length === 0) {
    return `No DMARC aggregate reports for ${domain} in the last ${days} days. Receivers send them to the rua= address of its DMARC record (svc domains show ${domain}).`;
  }
  const lines = rows.map((r) => ({
    ...r,
    spf: passed(r.spf_pass, r.count),
    dkim: passed(r.dkim_pass, r.count),
    dmarc: passed(r.dmarc_pass, r.count),
    flag: r.flagged ? 'NOT SVC, FAILS DMARC' : r.own_source ? 'svc' : null,
  }));
  const flagged = rows.some((r) => r.flagged);
  return [
    `DMARC aggregate reports for ${domain}, last ${days} days:`,
    table(lines, ['day', 'source_ip', 'count', 'spf', 'dkim', 'dmarc', 'flag', 'reporters']),
    ...(flagged
      ? [
          `warning: mail from addresses that are not this server failed DMARC for ${domain}: someone is spoofing the domain, or a sender is missing from its SPF and DKIM records.`,
        ]
      : []),
  ].join('\n');
}
