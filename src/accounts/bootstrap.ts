import type { KeysService } from '../keys/index.ts';
import type { Plan } from '../limits/index.ts';
import type { AccountsService } from './service.ts';

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
