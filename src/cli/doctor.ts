import type { DoctorCheck, DoctorReport } from '../doctor/index.ts';
import { withApp, type GlobalOptions } from './context.ts';
import { isIP } from 'node:net';
import { EXIT_FAILED, print, UsageError } from './io.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** One line per check: status, check, subject, what was found, and how to fix it. */
export function describeReport(r: DoctorReport): string {
  const line = (c: DoctorCheck) =>
    `${c.status.padEnd(4)}  ${c.check} ${c.subject}: ${c.detail}${c.fix ? ` (fix: ${c.fix})` : ''}`;
  const counts = (['fail', 'warn', 'ok'] as const).map((s) => `${r.checks.filter((c) => c.status === s).length} ${s}`);
  return [...r.checks.map(line), '', `${counts.join(', ')} at ${r.checked_at}`].join('\n');
}

/**
 * svc doctor: the server's own checks, with the host name, resolver and MX port the server
 * uses (or those given); exits 1 when a check fails, 0 with warnings only.
 */
export async function doctor(_args: string[], opts: Opts): Promise<void> {
  const flags = { dnsServers: str(opts.dnsServers), hostname: str(opts.hostname), mxPort: str(opts.mxPort) };
  const given = Array.isArray(opts.address) ? (opts.address as string[]) : [];
  const wrong = given.find((a) => isIP(a) === 0);
  if (wrong !== undefined)
    throw new UsageError(`--address wants an IPv4 or IPv6 address, got ${JSON.stringify(wrong)}`);
  const report = await withApp(
    opts,
    (app) =>
      app
        .doctor({
          ...(given.length > 0 ? { addresses: () => Promise.resolve(given) } : {}),
          ...(str(opts.probeDomain) ? { probeDomain: str(opts.probeDomain)! } : {}),
        })
        .run(),
    { flags },
  );
  print(opts, report, () => describeReport(report));
  if (report.status === 'fail') process.exitCode = EXIT_FAILED;
}
