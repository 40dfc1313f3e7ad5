import type { Actor } from '../audit/index.ts';
import { AppError } from '../errors.ts';
import { fieldError } from '../validation.ts';
import { parseInput } from '../validation.ts';
import { testSendSchema } from './schema.ts';
import type { TemplatesService } from './service.ts';

/** What a test send asks of the emails domain: a member's send through POST /v1/emails's rules. */
export interface MemberSendPort {
  sendAsMember(
    member: { orgId: string; projectId: string; env: 'LIVE' | 'TEST'; actor: Actor; action: string },
    body: unknown,
  ): Promise<{ id: string; status: string; skipped_recipients: { email: string; reason: string }[] }>;
}

/**
 * Sends a project's saved template (`version`, default its latest, draft or not) to one address,
 * as a send naming it by slug and version: rendered by the same sandbox, accepted by the same
 * rules (suppressions, a verified domain and volume when LIVE), with no API key; audited as
 * template.test_send. Its answer is that of POST /v1/emails.
 */
export async function sendTemplateTest(
  deps: { templates: Pick<TemplatesService, 'getTemplate' | 'getVersion'>; emails: MemberSendPort },
  at: { orgId: string; projectId: string; templateId: string; actor: Actor },
  input: unknown,
) {
  const d = parseInput(testSendSchema, input);
  const t = await deps.templates.getTemplate(at.projectId, at.templateId);
  // decisions.md: a test send is of the latest version by default, draft or not.
  const version = d.version ?? t.version;
  const v = await deps.templates.getVersion(at.projectId, t.id, version).catch((e: unknown) => {
    throw e instanceof AppError && e.code === 'not_found' ? fieldError('version', e.message) : e;
  });
  const member = {
    orgId: at.orgId,
    projectId: at.projectId,
    env: d.env,
    actor: at.actor,
    action: 'template.test_send',
  };
  return deps.emails.sendAsMember(member, {
    from: d.from,
    to: [d.to],
    template: t.slug,
    // The published version is what a send without template_version renders.
    ...(version === t.published_version ? {} : { template_version: version }),
    variables: d.variables ?? v.variables,
  });
}
