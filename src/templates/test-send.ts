import type { Actor } from '../audit/index.ts';
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
 * Sends a project's saved template to one address, as a send naming it by slug: rendered by
 * the same sandbox, accepted by the same rules (suppressions, a verified domain and volume when
 * LIVE), with no API key; audited as template.test_send. Its answer is that of POST /v1/emails.
 */
export async function sendTemplateTest(
  deps: { templates: Pick<TemplatesService, 'getTemplate'>; emails: MemberSendPort },
  at: { orgId: string; projectId: string; templateId: string; actor: Actor },
  input: unknown,
) {
  const d = parseInput(testSendSchema, input);
  const t = await deps.templates.getTemplate(at.projectId, at.templateId);
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
    variables: d.variables ?? t.variables,
  });
}
