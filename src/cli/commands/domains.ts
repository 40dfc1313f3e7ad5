import { Option, type Command } from 'commander';
import type * as DomainActions from '../domains.ts';
import { command, lazy, type ActionName } from './kit.ts';

const ID = '0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e';

/** Sending domains. */
export function registerDomains(program: Command): void {
  const dom = (name: ActionName<typeof DomainActions>) => lazy(async () => (await import('../domains.ts'))[name]);
  const d = command(program, 'domains', 'sending domains: DKIM key, DNS records, verification, project binding', [
    'svc domains add example.com --org Acme --project Web',
  ]);
  // The records name the server's host and verify asks its resolver: give the server's settings.
  const sub = (name: string, description: string, examples: string[]) =>
    command(d, name, description, examples)
      .argument('<domain>', 'domain name or id')
      .option('--dns-servers <list>', 'host:port,... resolver for checks (SVC_DNS_SERVERS)')
      .option('--hostname <name>', 'the server host name SPF and return-path name (SVC_HOSTNAME)');
  sub('add', 'add a domain, make its DKIM key and print the records to publish', [
    'svc domains add example.com --org Acme --project Web',
    'svc domains add example.com --org Acme --hostname mta.example.com --json',
    'svc domains add example.com --org Acme --project Web --receiving',
  ])
    .requiredOption('--org <org>', 'organization id or unique name')
    .option('--project <project>', 'bind the domain to this project right away')
    .option('--ed25519', 'also sign with an Ed25519 key (RFC 8463) once its record is published')
    .option('--receiving', "also receive mail for the project's routes (svc routes): the records add an MX")
    .action(dom('add'));
  sub('rotate-dkim', 'new DKIM keys under new selectors; svc switches once verify sees their records', [
    'svc domains rotate-dkim example.com',
    'svc domains rotate-dkim example.com --json',
  ]).action(dom('rotateDkim'));
  sub('update', "change a domain's settings", [
    'svc domains update example.com --ed25519 on',
    'svc domains update example.com --ed25519 off',
    'svc domains update example.com --receiving on',
  ])
    .addOption(
      new Option('--ed25519 <on|off>', 'sign with Ed25519 beside RSA (RFC 8463), or stop').choices(['on', 'off']),
    )
    .addOption(
      new Option('--receiving <on|off>', "receive mail for the project's routes (its MX points here), or stop").choices(
        ['on', 'off'],
      ),
    )
    .action(dom('update'));
  sub('show', 'a domain with its records, latest checks and warning', [
    'svc domains show example.com',
    'svc domains show example.com --json',
  ]).action(dom('show'));
  sub('verify', 'look the records up now and update the status; exits 1 unless the domain is verified', [
    'svc domains verify example.com',
    'until svc domains verify example.com; do sleep 60; done   # wait for DNS',
  ]).action(dom('verify'));
  sub('bind', 'let a project send from the domain once verified', ['svc domains bind example.com --project Web'])
    .requiredOption('--project <project>', 'project id or unique name')
    .action(dom('bind'));
  sub('unbind', 'stop a project sending from the domain', ['svc domains unbind example.com --project Web'])
    .requiredOption('--project <project>', 'project id or unique name')
    .action(dom('unbind'));
  sub('delete', 'delete the domain and its DKIM key', [
    'svc domains delete example.com',
    `svc domains delete ${ID}`,
  ]).action(dom('remove'));
  command(d, 'report', 'the DMARC aggregate reports receivers sent for a domain, per day and source IP', [
    'svc domains report example.com',
    'svc domains report example.com --days 30 --json',
  ])
    .argument('<domain>', 'domain name or id')
    .option('--days <n>', 'how many days back (default 7, at most 366)')
    .action(dom('report'));
  command(d, 'list', "an organization's domains", ['svc domains list --org Acme', 'svc domains list --org Acme --json'])
    .requiredOption('--org <org>', 'organization id or unique name')
    .option('--hostname <name>', 'the server host name (SVC_HOSTNAME)')
    .action(dom('list'));
}
