import type { KeysService } from '../keys/index.ts';
import type { Plan } from '../limits/index.ts';
import type { AccountsService } from './service.ts';
import { emailAddress } from './schema.ts';
import { randomToken } from '../lib/ids.ts';

export interface InitInput {
  email: string;
  password: string;
  org: string;
  project: string;
  plan: Plan;
  acceptDpa: boolean;
}

export interface InitResult {
  user_id: string;
  organization_id: string;
  project_id: string;
  api_key: { id: string; key: string; prefix: string; env: string; permissions: string };
}

/** The first owner, organization, project and a TEST key: what `svc init` and a first `svc serve` create. */
export async function initialize(accounts: AccountsService, keys: KeysService, input: InitInput): Promise<InitResult> {
  const user = await accounts.createUser({ email: input.email, password: input.password });
  const org = await accounts.createOrg({ name: input.org, owner_email: user.email, plan: input.plan });
  if (input.acceptDpa) await accounts.acceptDpa(org.id, user.email);
  const project = await accounts.createProject(org.id, { name: input.project });
  const key = await keys.createKey(project.id, { name: 'default', env: 'TEST' }, user.id);
  return {
    user_id: user.id,
    organization_id: org.id,
    project_id: project.id,
    api_key: { id: key.id, key: key.key!, prefix: key.prefix, env: key.env, permissions: key.permissions },
  };
}

/**
 * A first `svc serve` on an empty data dir: the owner admin@<hostname> (or
 * admin@svc.local when that is no valid address) with a random password, on
 * plan UNLIMITED. Returns undefined when the data dir already has an organization.
 */
export async function initializeFirstStart(accounts: AccountsService, keys: KeysService, hostname: string) {
  if ((await accounts.countOrgs()) > 0) return undefined;
  const candidate = `admin@${hostname}`.toLowerCase();
  const email = emailAddress.safeParse(candidate).success ? candidate : 'admin@svc.local';
  const password = randomToken(18);
  const input = { email, password, org: 'Default', project: 'Default', plan: 'UNLIMITED' as const, acceptDpa: false };
  return { email, password, result: await initialize(accounts, keys, input) };
}
