export { createDomainsRepo, type DomainsRepo } from './repo.ts';
export { createDomainsService, type DomainsService, type SigningKey } from './service.ts';
export { createDnsResolver, type DnsLookups, type Lookup } from './dns.ts';
export { startDomainChecks } from './scheduler.ts';
export type { Domain } from './present.ts';
export type { DnsRecord, RecordCheck } from './records.ts';
export { dmarcReportAddress } from './records.ts';
export type { DomainStatus } from './status.ts';
export { hostnameProblem } from './hostname.ts';
