import { iso, type Clock } from '../lib/clock.ts';
import { hostnameProblem } from '../domains/index.ts';
import type { DomainsStore } from '../domains/index.ts';
import { createBlocklistChecker, type BlocklistChecker } from './blocklist.ts';
import { okCheck, worstStatus, type DoctorCheck, type DoctorReport } from './check.ts';
import type { DoctorDns } from './dns.ts';
import { checkDomains, type DomainChecksDeps } from './domains.ts';
import { checkFcrdns } from './fcrdns.ts';
import { isPrivateAddress } from './address.ts';
import { checkPort25, tcpConnect, type Connect } from './port25.ts';
import { localOutboundAddresses } from './outbound.ts';

export interface DoctorDeps {
  clock: Clock;
  dns: DoctorDns;
  /** The HELO name (--hostname). */
  hostname: string;
  domains: Pick<DomainsStore, 'listDomainIds' | 'findDomainById'>;
  /** A domain's DMARC aggregate report days: sources not svc's that failed DMARC are warned of. */
  reports?: DomainChecksDeps['reports'];
  /** The port MX hosts are reached on (--mx-port). */
  mxPort: number;
  /** Mail goes through a smarthost (--relay). */
  relay: boolean;
  /** The outbound addresses; by default the OS's source addresses towards the Internet. */
  addresses?: () => Promise<string[]>;
  /** The TCP connect of the port 25 check (tests: a loopback peer). */
  connect?: Connect;
  /** The domain whose MX the port 25 check connects to. */
  probeDomain?: string;
  port25TimeoutMs?: number;
}

/** The MX tried by the port 25 check: a large receiver that is always up. */
export const PROBE_DOMAIN = 'gmail.com';

/**
 * `svc doctor`: what the server checks about itself, each check one line of a report. The
 * blocklist answers are cached by the returned runner, so a server that runs it hourly asks
 * each list once an hour per address.
 */
export function createDoctor(deps: DoctorDeps) {
  const blocklists: BlocklistChecker = createBlocklistChecker(deps.dns, deps.clock);
  return {
    /**
     * Runs every check; a check never throws, it reports. `signal` (the server stopping)
     * ends the run: the lookups in flight are cancelled (cancel) and no other starts, since
     * each would wait out its own timeout (the run rejects with the signal's reason).
     */
    async run(signal?: AbortSignal): Promise<DoctorReport> {
      const standing = () => signal?.throwIfAborted();
      const addresses = await (deps.addresses ?? localOutboundAddresses)();
      const checks: DoctorCheck[] = [hostnameCheck(deps.hostname), ...outboundChecks(addresses)];
      for (const a of addresses) {
        standing();
        checks.push(await checkFcrdns(deps.dns, a, deps.hostname));
      }
      standing();
      checks.push(
        await checkPort25({
          dns: deps.dns,
          clock: deps.clock,
          connect: deps.connect ?? tcpConnect,
          port: deps.mxPort,
          probeDomain: deps.probeDomain ?? PROBE_DOMAIN,
          timeoutMs: deps.port25TimeoutMs ?? 5000,
          relay: deps.relay,
        }),
      );
      // Private addresses are on no public list; asking would only spend the lists' quota.
      const listed = addresses.filter((a) => !isPrivateAddress(a));
      checks.push(...(await blocklists.check(listed, undefined, signal)));
      const domains = { repo: deps.domains, dns: deps.dns, hostname: deps.hostname, reports: deps.reports, signal };
      checks.push(...(await checkDomains(domains)));
      standing();
      return { checked_at: iso(deps.clock.now()), status: worstStatus(checks), checks };
    },
    /** Ends the lookups in flight (the server stopping). */
    cancel: () => deps.dns.cancel(),
  };
}

export type Doctor = ReturnType<typeof createDoctor>;

function hostnameCheck(hostname: string): DoctorCheck {
  const problem = hostnameProblem(hostname);
  if (!problem) return okCheck('hostname', hostname, `${hostname} is a fully qualified domain name`);
  return {
    check: 'hostname',
    subject: hostname,
    status: 'fail',
    detail: `${hostname} is not a fully qualified domain name`,
    fix: "set --hostname (SVC_HOSTNAME) to this machine's public name, such as mta.example.com",
  };
}

function outboundChecks(addresses: string[]): DoctorCheck[] {
  if (addresses.length > 0) return [];
  return [
    {
      check: 'outbound',
      subject: 'address',
      status: 'fail',
      detail: 'this machine has no route to the Internet: no outbound address',
      fix: 'give the machine a default route, or name the address with svc doctor --address',
    },
  ];
}
