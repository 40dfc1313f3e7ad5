import { connect as netConnect } from 'node:net';
import { ioTimeout, type Clock } from '../lib/clock.ts';
import type { DoctorCheck } from './check.ts';
import { okCheck } from './check.ts';
import type { DoctorDns } from './dns.ts';

/** Opens a TCP connection and closes it at once: whether it opened, or why not. Injected in tests. */
export type Connect = (
  host: string,
  port: number,
  timeoutMs: number,
) => Promise<{ ok: true } | { ok: false; reason: string }>;

/** A real TCP connect with a deadline; nothing is sent. */
export const tcpConnect: Connect = (host, port, timeoutMs) =>
  new Promise((resolve) => {
    const socket = netConnect({ host, port });
    const timer = ioTimeout(() => done({ ok: false, reason: `no answer within ${timeoutMs} ms (timeout)` }), timeoutMs);
    function done(r: { ok: true } | { ok: false; reason: string }) {
      timer.cancel();
      socket.destroy();
      resolve(r);
    }
    socket.once('connect', () => done({ ok: true }));
    socket.once('error', (e: NodeJS.ErrnoException) => done({ ok: false, reason: e.code ?? e.message }));
  });

export interface Port25Deps {
  dns: Pick<DoctorDns, 'mx' | 'addresses'>;
  clock: Clock;
  connect: Connect;
  /** The port MX hosts are reached on (--mx-port). */
  port: number;
  /** The domain whose first MX is tried. */
  probeDomain: string;
  timeoutMs: number;
  /** Mail goes through a smarthost (--relay): direct delivery is not needed. */
  relay: boolean;
}

/**
 * Whether this machine can open an SMTP connection to the Internet: a timed connect to one MX
 * of `probeDomain`. Never a failure: many providers block port 25 until asked, and a relay
 * does without it.
 */
export async function checkPort25(deps: Port25Deps): Promise<DoctorCheck> {
  const subject = `${deps.probeDomain}:${deps.port}`;
  if (deps.relay) return okCheck('port25', subject, 'not needed: mail goes through the relay (--relay)');
  const warn = (detail: string, fix: string): DoctorCheck => ({
    check: 'port25',
    subject,
    status: 'warn',
    detail,
    fix,
  });
  const mx = await deps.dns.mx(deps.probeDomain);
  if (!mx.ok || mx.values.length === 0) {
    return warn(
      `no MX host of ${deps.probeDomain} to try: ${mx.ok ? 'none published' : mx.reason}`,
      'check the resolver (--dns-servers)',
    );
  }
  const host = mx.values[0]!;
  const addresses = await deps.dns.addresses(host);
  if (!addresses.ok || addresses.values.length === 0) {
    return warn(
      `${host} has no address: ${addresses.ok ? 'none published' : addresses.reason}`,
      'check the resolver (--dns-servers)',
    );
  }
  const address = addresses.values[0]!;
  const started = deps.clock.now();
  const r = await deps.connect(address, deps.port, deps.timeoutMs);
  const ms = deps.clock.now() - started;
  if (r.ok) return okCheck('port25', subject, `connected to ${host} (${address}) port ${deps.port} in ${ms} ms`);
  return warn(
    `could not connect to ${host} (${address}) port ${deps.port}: ${r.reason}, after ${ms} ms`,
    'many providers block outbound port 25: ask yours to open it, or send through a smarthost with --relay',
  );
}
