import { Argument, Option, type Command } from 'commander';
import { PLANS } from '../../limits/plans.ts';
import type * as AdminActions from '../admin.ts';
import { anyCase, command, lazy, type ActionName } from './kit.ts';

const admin = (name: ActionName<typeof AdminActions>) => lazy(async () => (await import('../admin.ts'))[name]);
const ROLES = ['OWNER', 'ADMIN', 'DEVELOPER', 'VIEWER'];

/** init, users, orgs, projects and members. */
export function registerAccounts(program: Command): void {
  command(program, 'init', 'create the owner user, organization, project and a TEST key', [
    'svc init --email me@example.com --password-stdin --accept-dpa < pw.txt',
    'svc init --email me@example.com --password s3cret-pass --org Acme --project Web --plan PAID',
  ])
    .requiredOption('--email <email>', 'owner email')
    .option('--password <password>', 'owner password')
    .option('--password-stdin', 'read the password from standard input')
    .option('--org <name>', 'organization name', 'Default')
    .option('--project <name>', 'project name', 'Default')
    .addOption(anyCase(new Option('--plan <plan>', 'plan of the organization'), PLANS).default('UNLIMITED'))
    .option('--accept-dpa', 'sign the data-processing agreement as the owner')
    .action(admin('init'));

  const users = command(program, 'users', 'users who sign in to svc', [
    'svc users create --email dev@example.com --password-stdin < pw.txt',
  ]);
  command(users, 'create', 'create a user', [
    'svc users create --email dev@example.com --password s3cret-pass',
    'svc users create --email dev@example.com --password-stdin < pw.txt',
  ])
    .requiredOption('--email <email>', 'the user email')
    .option('--password <password>', 'the password')
    .option('--password-stdin', 'read the password from standard input')
    .action(admin('createUser'));

  registerOrgs(program);
  registerProjects(program);

  const members = command(program, 'members', "an organization's members and their roles", [
    'svc members list --org Acme',
  ]);
  command(members, 'add', 'add a user to an organization with a role', [
    'svc members add --org Acme --email dev@example.com --role DEVELOPER',
  ])
    .requiredOption('--org <org>', 'organization id or unique name')
    .requiredOption('--email <email>', 'email of an existing user')
    .addOption(anyCase(new Option('--role <role>', 'the role'), ROLES).makeOptionMandatory())
    .action(admin('addMember'));
  command(members, 'list', "list an organization's members", ['svc members list --org Acme --json'])
    .requiredOption('--org <org>', 'organization id or unique name')
    .action(admin('listMembers'));
}

function registerOrgs(program: Command): void {
  const orgs = command(program, 'orgs', 'organizations: plan and data-processing agreement', ['svc orgs list']);
  command(orgs, 'create', 'create an organization owned by an existing user', [
    'svc orgs create --name Acme --owner me@example.com --plan PAID',
  ])
    .requiredOption('--name <name>', 'organization name')
    .requiredOption('--owner <email>', 'email of the owning user')
    .addOption(anyCase(new Option('--plan <plan>', 'plan (default: the server default plan)'), PLANS))
    .action(admin('createOrg'));
  command(orgs, 'list', 'list every organization', ['svc orgs list', 'svc orgs list --json']).action(admin('listOrgs'));
  command(orgs, 'set-plan', "change an organization's plan", ['svc orgs set-plan Acme PREMIUM'])
    .argument('<org>', 'organization id or unique name')
    .addArgument(anyCase(new Argument('<plan>', 'the new plan'), PLANS))
    .action(admin('setPlan'));
  command(orgs, 'accept-dpa', 'sign the data-processing agreement (needed for LIVE keys)', [
    'svc orgs accept-dpa Acme --user me@example.com',
  ])
    .argument('<org>', 'organization id or unique name')
    .requiredOption('--user <email>', 'the member who signs')
    .action(admin('acceptDpa'));
}

function registerProjects(program: Command): void {
  const projects = command(program, 'projects', "an organization's projects: keys, templates and emails live in one", [
    'svc projects list --org Acme',
  ]);
  command(projects, 'create', 'create a project in an organization', ['svc projects create --org Acme --name Web'])
    .requiredOption('--org <org>', 'organization id or unique name')
    .requiredOption('--name <name>', 'project name')
    .action(admin('createProject'));
  command(projects, 'list', "list an organization's projects", ['svc projects list --org Acme --json'])
    .requiredOption('--org <org>', 'organization id or unique name')
    .action(admin('listProjects'));
  command(projects, 'settings', "show or change a project's settings (tracking, one-click unsubscribe)", [
    'svc projects settings Web --org Acme',
    'svc projects settings Web --org Acme --click-tracking on --open-tracking off',
    'svc projects settings Web --one-click-unsubscribe on',
    'svc projects settings Web --click-tracking on --relay-tracking on',
  ])
    .argument('<project>', 'project id or unique name')
    .addOption(new Option('--click-tracking <on|off>', 'rewrite links of LIVE emails').choices(['on', 'off']))
    .addOption(new Option('--open-tracking <on|off>', 'add an open pixel to LIVE emails').choices(['on', 'off']))
    .addOption(
      new Option('--one-click-unsubscribe <on|off>', 'List-Unsubscribe one-click headers (RFC 8058)').choices([
        'on',
        'off',
      ]),
    )
    .addOption(
      new Option(
        '--relay-tracking <on|off>',
        'track relayed mail too: its HTML is rewritten, so the message is rebuilt, not passed through',
      ).choices(['on', 'off']),
    )
    .option('--org <org>', 'organization of the project, when its name is not unique')
    .action(admin('projectSettings'));
}

/** API keys. */
export function registerKeys(program: Command): void {
  const keys = command(program, 'keys', "a project's API keys", ['svc keys list --project Default']);
  command(keys, 'create', 'create an API key; it is printed once', [
    'svc keys create --project Default --name ci --env TEST --permissions SENDING_ONLY',
    'svc keys create --project Default --name prod --env LIVE --expires-at 2027-01-01T00:00:00Z --json',
  ])
    .requiredOption('--project <project>', 'project id or unique name')
    .requiredOption('--name <name>', 'a name to recognise the key by')
    .addOption(
      anyCase(new Option('--env <env>', 'LIVE delivers, TEST simulates (any case)'), ['LIVE', 'TEST']).default('LIVE'),
    )
    .addOption(
      anyCase(new Option('--permissions <p>', 'what the key may do'), [
        'FULL_ACCESS',
        'SENDING_ONLY',
        'READ_ONLY',
      ]).default('FULL_ACCESS'),
    )
    .option('--expires-at <iso>', 'ISO-8601 expiry')
    .action(admin('createKey'));
  command(keys, 'list', "list a project's keys (never the secret)", [
    'svc keys list --project Default',
    'svc keys list --project Default --include-revoked --json',
  ])
    .requiredOption('--project <project>', 'project id or unique name')
    .option('--include-revoked', 'also list revoked keys')
    .action(admin('listKeys'));
  command(keys, 'revoke', 'revoke a key; a running server refuses it on its next request', [
    'svc keys revoke 0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e',
  ])
    .argument('<key_id>', 'the key id (svc keys list)')
    .action(admin('revokeKey'));
}
