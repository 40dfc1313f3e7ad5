import { domainNameSchema } from './schema.ts';

// Names that resolve only on this machine or this network: the world's resolvers never answer for them.
const LOCAL_ONLY = /(^|\.)(localhost|localdomain|local|internal|lan|home\.arpa)$/;

/**
 * Why records that name `hostname` can never verify, or null when they can.
 * The SPF record (`a:<host>`) and the return-path MX name the server's host,
 * so a bare name such as `vm` (many machines' default) or a local-only name
 * would be published and then never match.
 */
export function hostnameProblem(hostname: string): string | null {
  const fqdn = domainNameSchema.safeParse(hostname).success && !LOCAL_ONLY.test(hostname);
  if (fqdn) return null;
  return (
    `the host name "${hostname}" is not a fully qualified domain name, so the SPF and return-path records ` +
    `that name it can never verify: set --hostname (SVC_HOSTNAME) to this machine's public name, such as mta.example.com`
  );
}
