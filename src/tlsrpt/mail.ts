// A report by mail goes through svc's own accept path (the send rules, the queue, DKIM by the
// From domain's key), as the project the From's domain is bound to first: that project's
// suppressions, limits and event history hold it, as for any of its mail.
import { projectSender, type Sender } from '../emails/index.ts';

export interface ReportMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  headers: Record<string, string>;
  attachment: { filename: string; content: Buffer };
}

export interface ReportMailerDeps {
  findDomainByName(name: string): Promise<{ id: string } | undefined>;
  listProjectIds(domainId: string): Promise<string[]>;
  getProjectById(id: string): Promise<{ id: string; organization_id: string }>;
  getOrg(id: string): Promise<{
    id: string;
    plan: Sender['plan'];
    daily_limit: number | null;
    dpa_accepted_at: string | null;
  }>;
  send(sender: Sender, body: unknown): Promise<{ response: { id: string } }>;
}

/** Sends a report as the From domain's first project (a LIVE send without a key); resolves to the email's id. */
export function createReportMailer(deps: ReportMailerDeps): (m: ReportMail) => Promise<string> {
  return async (m) => {
    const domainName = m.from.slice(m.from.lastIndexOf('@') + 1);
    const domain = await deps.findDomainByName(domainName);
    const [projectId] = domain ? await deps.listProjectIds(domain.id) : [];
    if (!projectId)
      throw new Error(`--tls-reports-from ${m.from}: ${domainName} is bound to no project of this server`);
    const project = await deps.getProjectById(projectId);
    const sender = projectSender(project, await deps.getOrg(project.organization_id));
    const { response } = await deps.send(sender, {
      from: m.from,
      to: [m.to],
      subject: m.subject,
      text: m.text,
      headers: m.headers,
      tags: ['tls-report'],
      attachments: [
        {
          filename: m.attachment.filename,
          content_type: 'application/tlsrpt+gzip',
          content_base64: m.attachment.content.toString('base64'),
        },
      ],
    });
    return response.id;
  };
}
