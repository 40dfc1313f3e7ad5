import { withApp, readStdin, type GlobalOptions } from './context.ts';
import { print, record, table, UsageError } from './io.ts';
import { initialize } from '../accounts/index.ts';
import { planSchema } from '../accounts/schema.ts';
import { parseInput } from '../validation.ts';

type Opts = Record<string, unknown> & GlobalOptions;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

async function passwordOf(opts: Opts): Promise<string> {
  if (opts.passwordStdin) return (await readStdin()).replace(/\r?\n$/, '');
  const p = str(opts.password);
  if (p === undefined) throw new UsageError('give --password or --password-stdin');
  return p;
}

/** svc init: the owner, organization, project and a TEST key, printed once. */
export async function init(_args: string[], opts: Opts): Promise<void> {
  const password = await passwordOf(opts);
  const result = await withApp(
    opts,
    (app) =>
      initialize(app.accounts, app.keys, {
        email: str(opts.email)!,
        password,
        org: str(opts.org)!,
        project: str(opts.project)!,
        plan: parseInput(planSchema, opts.plan),
        acceptDpa: Boolean(opts.acceptDpa),
      }),
    { create: true },
  );
  print(opts, result, () =>
    [
      `Created user ${str(opts.email)}, organization ${str(opts.org)} and project ${str(opts.project)}.`,
      `TEST API key (shown once, keep it): ${result.api_key.key}`,
    ].join('\n'),
  );
}

export async function createUser(_args: string[], opts: Opts): Promise<void> {
  const password = await passwordOf(opts);
  const user = await withApp(opts, (app) => app.accounts.createUser({ email: str(opts.email)!, password }));
  print(opts, user, () => record(user));
}

export async function createOrg(_args: string[], opts: Opts): Promise<void> {
  const org = await withApp(opts, (app) =>
    app.accounts.createOrg({ name: str(opts.name)!, owner_email: str(opts.owner)!, plan: str(opts.plan) as never }),
  );
  print(opts, org, () => record({ ...org }));
}

export async function listOrgs(_args: string[], opts: Opts): Promise<void> {
  const orgs = await withApp(opts, (app) => app.accounts.listOrgs());
  print(opts, orgs, () => table(orgs as never, ['id', 'name', 'plan', 'dpa_accepted_at', 'created_at']));
}

export async function setPlan([org, plan]: string[], opts: Opts): Promise<void> {
  const o = await withApp(opts, (app) => app.accounts.setPlan(org!, plan!));
  print(opts, o, () => record({ ...o }));
}

export async function acceptDpa([org]: string[], opts: Opts): Promise<void> {
  const o = await withApp(opts, (app) => app.accounts.acceptDpa(org!, str(opts.user)!));
  print(opts, o, () => record({ ...o }));
}

export async function createProject(_args: string[], opts: Opts): Promise<void> {
  const p = await withApp(opts, (app) => app.accounts.createProject(str(opts.org)!, { name: str(opts.name)! }));
  print(opts, p, () => record({ ...p }));
}

export async function listProjects(_args: string[], opts: Opts): Promise<void> {
  const ps = await withApp(opts, (app) => app.accounts.listProjects(str(opts.org)!));
  print(opts, ps, () => table(ps as never, ['id', 'name', 'organization_id', 'created_at']));
}

/** svc projects settings: merges the given flags into the project's settings and prints the project. */
export async function projectSettings([project]: string[], opts: Opts): Promise<void> {
  const onOff = (v: unknown) => (v === undefined ? undefined : v === 'on');
  const settings = Object.fromEntries(
    Object.entries({
      click_tracking: onOff(opts.clickTracking),
      open_tracking: onOff(opts.openTracking),
      one_click_unsubscribe: onOff(opts.oneClickUnsubscribe),
      relay_tracking: onOff(opts.relayTracking),
    }).filter(([, v]) => v !== undefined),
  );
  const p = await withApp(opts, (app) => app.accounts.updateProjectSettings(project!, settings, str(opts.org)));
  print(opts, p, () => record({ ...p }));
}

export async function addMember(_args: string[], opts: Opts): Promise<void> {
  const m = await withApp(opts, (app) =>
    app.accounts.addMember(str(opts.org)!, { email: str(opts.email)!, role: str(opts.role)! }),
  );
  print(opts, m, () => record({ ...m }));
}

export async function listMembers(_args: string[], opts: Opts): Promise<void> {
  const ms = await withApp(opts, (app) => app.accounts.listMembers(str(opts.org)!));
  print(opts, ms, () => table(ms as never, ['user_id', 'email', 'role', 'created_at']));
}

export async function createKey(_args: string[], opts: Opts): Promise<void> {
  const key = await withApp(opts, async (app) => {
    const project = await app.accounts.getProject(str(opts.project)!);
    return app.keys.createKey(project.id, {
      name: str(opts.name)!,
      env: str(opts.env) as never,
      permissions: str(opts.permissions) as never,
      expires_at: str(opts.expiresAt) ?? null,
    });
  });
  const { key: secret, ...shown } = key;
  print(opts, key, () => `${record(shown)}\nkey (shown once, keep it): ${secret}`);
}

export async function listKeys(_args: string[], opts: Opts): Promise<void> {
  const keys = await withApp(opts, async (app) => {
    const project = await app.accounts.getProject(str(opts.project)!);
    return app.keys.listKeys(project.id, Boolean(opts.includeRevoked));
  });
  print(opts, keys, () =>
    table(keys as never, ['id', 'name', 'prefix', 'env', 'permissions', 'expires_at', 'revoked_at', 'last_used_at']),
  );
}

export async function revokeKey([id]: string[], opts: Opts): Promise<void> {
  const key = await withApp(opts, (app) => app.keys.revokeKey(id!));
  print(opts, key, () => `revoked ${key.id} (${key.name})`);
}
