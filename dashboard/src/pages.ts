// Every page of the dashboard, in the order of the header's navigation. A page is reached at
// #/o/<org>/p/<project>/<name>[/<id>][?query]; an organization's pages (domains, members, the audit
// log) keep the current project in their route so the switcher and the header stay the same.
import type { VNode } from 'preact';
import { AuditLog } from './pages/audit.tsx';
import { Domains } from './pages/domains.tsx';
import { EmailsPage } from './pages/emails.tsx';
import { Inbound } from './pages/inbound.tsx';
import { Keys } from './pages/keys.tsx';
import { Members } from './pages/members.tsx';
import { Settings } from './pages/settings.tsx';
import { Suppressions } from './pages/suppressions.tsx';
import { Templates } from './pages/templates.tsx';
import { Usage } from './pages/usage.tsx';
import { Webhooks } from './pages/webhooks.tsx';
import { mayAdmin, mayWrite, type PageProps, type Role } from './ui.tsx';

export interface Page {
  name: string;
  label: string;
  view: (props: PageProps) => VNode | null;
  /** Whether the header links to it for this role; the server refuses anyone it would not show it to. */
  shown: (role: Role | undefined) => boolean;
}

const everyone = () => true;

export const PAGES: readonly Page[] = [
  { name: 'emails', label: 'Emails', view: EmailsPage, shown: everyone },
  { name: 'usage', label: 'Usage', view: Usage, shown: everyone },
  { name: 'templates', label: 'Templates', view: Templates, shown: everyone },
  { name: 'webhooks', label: 'Webhooks', view: Webhooks, shown: everyone },
  { name: 'inbound', label: 'Inbound', view: Inbound, shown: everyone },
  { name: 'suppressions', label: 'Suppressions', view: Suppressions, shown: everyone },
  { name: 'keys', label: 'API keys', view: Keys, shown: mayWrite },
  { name: 'domains', label: 'Domains', view: Domains, shown: everyone },
  { name: 'members', label: 'Members', view: Members, shown: everyone },
  { name: 'audit', label: 'Audit log', view: AuditLog, shown: mayAdmin },
  { name: 'settings', label: 'Settings', view: Settings, shown: everyone },
];
