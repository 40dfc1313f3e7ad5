import type { DoctorCheck } from './check.ts';
import { okCheck } from './check.ts';
import type { DoctorDns } from './dns.ts';
import { canonicalAddress, isPrivateAddress } from './address.ts';

const fcrdns = (address: string, status: DoctorCheck['status'], detail: string, fix: string | null): DoctorCheck => ({
  check: 'fcrdns',
  subject: address,
  status,
  detail,
  fix,
});

/**
 * Forward-confirmed reverse DNS of an outbound address: its PTR names a host whose A/AAAA
 * records include the address again, and that host is the name svc gives in HELO
 * (`hostname`). Receivers such as Gmail refuse or spam mail from an address without it.
 */
export async function checkFcrdns(dns: Pick<DoctorDns, 'ptr' | 'addresses'>, address: string, hostname: string) {
  const setPtr = `ask the provider of ${address} to set its reverse DNS (PTR) to ${hostname}`;
  if (isPrivateAddress(address)) {
    const detail = `${address} is a private address: mail leaves through NAT under a public one, which this check cannot see`;
    return fcrdns(address, 'warn', detail, 'run svc doctor --address PUBLIC_ADDRESS with the address mail leaves from');
  }
  const ptr = await dns.ptr(address);
  if (!ptr.ok && ptr.temporary) return fcrdns(address, 'warn', ptr.reason, 'check the resolver (--dns-servers)');
  if (!ptr.ok || ptr.values.length === 0) return fcrdns(address, 'fail', `${address} has no PTR record`, setPtr);
  const confirmed: string[] = [];
  const unconfirmed: string[] = [];
  for (const name of ptr.values) {
    const forward = await dns.addresses(name);
    if (!forward.ok && forward.temporary)
      return fcrdns(address, 'warn', forward.reason, 'check the resolver (--dns-servers)');
    const back = forward.ok ? forward.values.map(canonicalAddress) : [];
    (back.includes(canonicalAddress(address)) ? confirmed : unconfirmed).push(name);
  }
  if (confirmed.length === 0) {
    const detail = `${address}'s PTR names ${unconfirmed.join(', ')}, whose A/AAAA records do not include ${address}`;
    return fcrdns(address, 'fail', detail, `publish an A (or AAAA) record ${ptr.values[0]} -> ${address}`);
  }
  if (!confirmed.includes(hostname)) {
    const detail = `${address} is confirmed as ${confirmed.join(', ')}, but svc says HELO ${hostname}`;
    return fcrdns(address, 'fail', detail, `set --hostname ${confirmed[0]} (SVC_HOSTNAME), or ${setPtr}`);
  }
  return okCheck('fcrdns', address, `${address} -> ${hostname} -> ${address}, and svc says HELO ${hostname}`);
}
