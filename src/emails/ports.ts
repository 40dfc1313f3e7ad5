// Who sends, and what the emails service reads of other domains (accounts, templates, the
// renderer): the ports its use cases are given (service.ts, build.ts).
import type { Plan } from '../limits/index.ts';

/** Who is sending: the key's project and organization as the send rules need them. */
export interface Sender {
  /** The API key that sends; null for a member's send from the dashboard (no key sent it). */
  id: string | null;
  project_id: string;
  organization_id: string;
  env: 'LIVE' | 'TEST';
  plan: Plan;
  daily_limit: number | null;
  dpa_accepted_at: string | null;
  /** The user who created the key: the onboarding trial sends only to their address. */
  created_by?: string | null;
}

/**
 * svc's own LIVE send for a project, sent by no key (a route's forward, a TLS report): the
 * project's organization's plan, limit and DPA apply as to any send.
 */
export function projectSender(
  project: { id: string; organization_id: string },
  org: { plan: Plan; daily_limit: number | null; dpa_accepted_at: string | null },
): Sender {
  return {
    id: null,
    project_id: project.id,
    organization_id: project.organization_id,
    env: 'LIVE',
    plan: org.plan,
    daily_limit: org.daily_limit,
    dpa_accepted_at: org.dpa_accepted_at,
  };
}

/** What the send rules read of accounts: the key creator's address, an organization's plan and DPA. */
export interface AccountsPort {
  findUserById(id: string): Promise<{ email: string } | undefined>;
  findOrgById(
    id: string,
  ): Promise<{ id: string; plan: Plan; daily_limit: number | null; dpa_accepted_at: string | null } | undefined>;
}

export interface TemplateSource {
  getBySlug(
    projectId: string,
    slug: string,
    version?: number,
  ): Promise<{
    id: string;
    version: number;
    subject_template: string;
    html_template: string | null;
    text_template: string | null;
  }>;
}

export interface RenderPort {
  render(
    input: { subject: string; html: string | null; text: string | null },
    variables: Record<string, unknown>,
  ): Promise<{ subject: string; html: string | null; text: string | null }>;
}
