// The organization's pages of the web dashboard in a real browser (issue 31, items 1, 4, 5 and
// 6): domains with their records, verify and DKIM rotation; members, an invitation accepted in a
// fresh browser with a first password, a role changed; settings that persist; and a VIEWER who
// sees no write action. Domain checks ask a loopback DNS server that knows no record.
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, seriousViolations, startDashboard, warnIfNoChromium, type Dashboard } from './peers/dashboard.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';

warnIfNoChromium('dashboard-org.test.ts');

const NEW_MEMBER = { email: 'new@example.org', password: 'new-member-password-1' };
const SPOOFER_IP = '203.0.113.66';

/** A receiver's DMARC aggregate report about mail.example.org (RFC 7489 appendix C), as mailed to its rua=. */
function dmarcReport(begin: string): Promise<Buffer> {
  const at = Date.parse(begin) / 1000;
  const xml = `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <report_metadata>
    <org_name>receiver.example</org_name><email>dmarc@receiver.example</email><report_id>r1</report_id>
    <date_range><begin>${at}</begin><end>${at + 86_400}</end></date_range>
  </report_metadata>
  <policy_published><domain>mail.example.org</domain><p>none</p></policy_published>
  <record>
    <row>
      <source_ip>${SPOOFER_IP}</source_ip><count>3</count>
      <policy_evaluated><disposition>none</disposition><dkim>fail</dkim><spf>fail</spf></policy_evaluated>
    </row>
    <identifiers><header_from>mail.example.org</header_from></identifiers>
    <auth_results><spf><domain>mail.example.org</domain><result>fail</result></spf></auth_results>
  </record>
</feedback>`;
  return new MailComposer({
    from: 'dmarc@receiver.example',
    to: 'dmarc@bounces.mail.example.org',
    subject: 'Report Domain: mail.example.org Submitter: receiver.example',
    text: 'An aggregate report.',
    attachments: [{ filename: 'receiver.example!mail.example.org!r1.xml', content: xml, contentType: 'text/xml' }],
  })
    .compile()
    .build();
}

describe.skipIf(!CHROMIUM)('the organization pages of the dashboard in Chromium', () => {
  let d: Dashboard;
  let dns: DnsServer;
  let owner: Page;
  let member: Page;

  beforeAll(async () => {
    dns = await startDnsServer();
    d = await startDashboard(undefined, { dnsServers: dns.server });
    owner = await d.signedIn();
    // Every confirm() (delete, revoke, rotate) is answered yes.
    owner.on('dialog', (dialog) => void dialog.accept());
  }, 60_000);

  afterAll(async () => {
    await d?.close();
    await dns?.close();
  });

  const open = async (page: Page, link: string, heading: string) => {
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: link }).click();
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  };
  /** The latest status line (the members page keeps an invitation's link above it). */
  const status = (page: Page) => page.getByRole('status').last().textContent();

  it("adds a domain and shows each record with its state; verify shows the lookups' failure; copy; rotate", async () => {
    await open(owner, 'Domains', 'Domains');
    expect(await seriousViolations(owner)).toEqual([]);
    await owner.getByLabel('Domain name').fill('mail.example.org');
    await owner.getByRole('button', { name: 'Add domain' }).click();
    await owner.getByRole('heading', { name: 'mail.example.org' }).waitFor();
    const domain = (await d.app.domains.listDomains(d.orgId))[0]!;
    const rows = owner.locator('table.records tbody tr');
    expect(await rows.count()).toBe(domain.records.length);
    for (const r of domain.records) {
      const row = rows.filter({ hasText: r.name }).filter({ hasText: r.value });
      expect(await row.first().textContent()).toContain('not checked yet');
    }
    expect(await owner.getByRole('button', { name: /^Copy/ }).count()).toBe(domain.records.length);
    await owner.getByRole('button', { name: /^Copy/ }).first().click();
    await expect.poll(() => status(owner)).toMatch(/Copied|Selected/);
    expect(await seriousViolations(owner)).toEqual([]);

    await owner.getByRole('button', { name: 'Verify now' }).click();
    await expect.poll(() => status(owner)).toMatch(/mail\.example\.org is (PENDING|FAILED)/);
    await expect.poll(() => rows.filter({ hasText: 'not found' }).count()).toBe(domain.records.length);
    expect(dns.queries.length).toBeGreaterThan(0);

    // A report from a receiver: the domain shows it, its source not svc and failing DMARC flagged.
    expect(await owner.getByRole('heading', { name: 'DMARC reports' }).count()).toBe(0);
    await d.app.dmarc.receive(await dmarcReport('2026-11-27T00:00:00Z'), ['dmarc@bounces.mail.example.org']);
    await owner.reload();
    await owner.getByRole('heading', { name: 'DMARC reports' }).waitFor();
    expect(await owner.getByRole('row', { name: new RegExp(SPOOFER_IP) }).textContent()).toContain('failing DMARC');
    expect(await seriousViolations(owner)).toEqual([]);

    // Bound to the project when added (the box was ticked): unbound, then bound again.
    await owner.getByRole('button', { name: 'Stop sending from it in this project' }).click();
    await expect.poll(() => status(owner)).toBe('This project no longer sends from mail.example.org.');
    expect((await d.app.domains.listDomains(d.orgId))[0]!.project_ids).toEqual([]);
    await owner.getByRole('button', { name: 'Send from it in this project' }).click();
    await expect.poll(() => status(owner)).toContain('This project sends from mail.example.org');
    expect((await d.app.domains.listDomains(d.orgId))[0]!.project_ids).toEqual([d.projectId]);

    const keys = (await d.app.domains.listDomains(d.orgId))[0]!.dkim_keys.length;
    await owner.getByRole('button', { name: 'Rotate DKIM keys' }).click();
    await expect.poll(() => status(owner)).toContain('New DKIM keys');
    expect((await d.app.domains.listDomains(d.orgId))[0]!.dkim_keys.length).toBeGreaterThan(keys);

    await owner.getByRole('link', { name: 'All domains' }).click();
    await owner.getByLabel('Domain name').fill('old.example.org');
    await owner.getByRole('button', { name: 'Add domain' }).click();
    await owner.getByRole('heading', { name: 'old.example.org' }).waitFor();
    await owner.getByRole('link', { name: 'All domains' }).click();
    await owner.getByRole('button', { name: 'Delete old.example.org' }).click();
    await expect.poll(() => status(owner)).toBe('old.example.org is deleted.');
    expect(await owner.getByRole('link', { name: 'old.example.org' }).count()).toBe(0);
    expect((await d.app.domains.listDomains(d.orgId)).map((x) => x.name)).toEqual(['mail.example.org']);
  });

  it('invites a member, who opens the link in a fresh browser, chooses a password and lands signed in', async () => {
    await open(owner, 'Members', 'Members');
    await owner.getByLabel('Address to invite').fill(NEW_MEMBER.email);
    await owner.getByLabel('Invite as').selectOption('DEVELOPER');
    await owner.getByRole('button', { name: 'Invite' }).click();
    const link = (await owner.locator('.notice .secret').textContent())!;
    expect(link).toMatch(new RegExp(`^${d.base}/#/invitations/svc_inv_`));
    await owner.getByRole('cell', { name: NEW_MEMBER.email, exact: true }).waitFor();
    expect(await seriousViolations(owner)).toEqual([]);

    member = await (await d.browser.newContext()).newPage();
    member.setDefaultTimeout(10_000);
    await member.goto(`${d.base}/#/invitations/svc_inv_nonsense`);
    await member.getByLabel('Password').fill(NEW_MEMBER.password);
    await member.getByRole('button', { name: 'Create the account and join' }).click();
    await expect.poll(() => member.getByRole('alert').textContent()).toContain('No such invitation');
    await member.goto(link);
    await member.reload();
    expect(await seriousViolations(member)).toEqual([]);
    await member.getByLabel('Password').fill(NEW_MEMBER.password);
    await member.getByRole('button', { name: 'Create the account and join' }).click();
    await member.getByRole('heading', { name: 'Emails' }).waitFor();
    expect((await d.app.accounts.listMembers(d.orgId)).find((m) => m.email === NEW_MEMBER.email)?.role).toBe(
      'DEVELOPER',
    );
  });

  it('lets a user with an account sign in and join, or join as the user signed in in the browser', async () => {
    const link = async (email: string) => {
      await d.app.accounts.createUser({ email, password: 'guest-password-1' });
      const by = { user_id: (await d.app.accounts.getUserByEmail('owner@example.com')).id, role: 'OWNER' as const };
      const inv = await d.app.members.invite(d.orgId, { email, role: 'VIEWER' }, by, { type: 'cli', os_user: 'op' });
      return `${d.base}/#/invitations/${inv.token}`;
    };
    const fresh = async () => {
      const page = await (await d.browser.newContext()).newPage();
      page.setDefaultTimeout(10_000);
      return page;
    };

    // Signed out: a first password is refused with the API's answer, and the page asks to sign in.
    const one = await fresh();
    await one.goto(await link('one@example.org'));
    await one.getByLabel('Password').fill('guest-password-1');
    await one.getByRole('button', { name: 'Create the account and join' }).click();
    await expect.poll(() => one.getByRole('alert').textContent()).toContain('has an account');
    await one.getByLabel('Email').fill('one@example.org');
    await one.getByRole('button', { name: 'Sign in and join' }).click();
    await one.getByRole('heading', { name: 'Emails' }).waitFor();

    // Signed in already (a user of no organization yet): joins with one click.
    const two = await fresh();
    const twoLink = await link('two@example.org');
    await two.goto(`${d.base}/`);
    await two.getByLabel('Email').fill('two@example.org');
    await two.getByLabel('Password').fill('guest-password-1');
    await two.getByRole('button', { name: 'Sign in' }).click();
    // No organization to land in: the sign-in form goes, and the page waits.
    await two.getByRole('button', { name: 'Sign in' }).waitFor({ state: 'detached' });
    await two.goto(twoLink);
    await two.getByRole('button', { name: 'I have an account: sign in instead' }).click();
    await two.getByRole('button', { name: 'Join as the user signed in here' }).click();
    await two.getByRole('heading', { name: 'Emails' }).waitFor();
    const roles = (await d.app.accounts.listMembers(d.orgId)).filter((m) => m.email.endsWith('@example.org'));
    expect(roles.map((m) => [m.email, m.role]).sort()).toEqual([
      [NEW_MEMBER.email, 'DEVELOPER'],
      ['one@example.org', 'VIEWER'],
      ['two@example.org', 'VIEWER'],
    ]);
    await one.context().close();
    await two.context().close();
  });

  it("changes the new member's role, and revokes a pending invitation", async () => {
    await owner.reload();
    await owner.getByRole('heading', { name: 'Members' }).waitFor();
    const role = owner.getByLabel(`Role of ${NEW_MEMBER.email}`);
    await role.selectOption('VIEWER');
    await expect.poll(() => status(owner)).toBe(`${NEW_MEMBER.email} is VIEWER now.`);
    expect((await d.app.accounts.listMembers(d.orgId)).find((m) => m.email === NEW_MEMBER.email)?.role).toBe('VIEWER');

    await owner.getByLabel('Address to invite').fill('gone@example.org');
    await owner.getByRole('button', { name: 'Invite' }).click();
    await owner.getByRole('cell', { name: 'gone@example.org', exact: true }).waitFor();
    await owner.getByRole('button', { name: 'Revoke the invitation of gone@example.org' }).click();
    await expect.poll(() => status(owner)).toBe('The invitation of gone@example.org is revoked.');
    expect(await owner.getByRole('cell', { name: 'gone@example.org', exact: true }).count()).toBe(0);
    expect(await d.app.members.listInvitations(d.orgId)).toEqual([]);
  });

  it('saves the settings, which persist; an OWNER renames the organization and makes a project', async () => {
    await open(owner, 'Settings', 'Settings');
    expect(await seriousViolations(owner)).toEqual([]);
    await owner.getByLabel('Project name').fill('Web shop');
    await owner.getByLabel('Track clicks').check();
    await owner.getByRole('button', { name: 'Save the project' }).click();
    await expect.poll(() => status(owner)).toBe('The project is saved.');
    await owner.reload();
    await owner.getByRole('heading', { name: 'Settings' }).waitFor();
    await expect.poll(() => owner.getByLabel('Project name').inputValue()).toBe('Web shop');
    expect(await owner.getByLabel('Track clicks').isChecked()).toBe(true);
    expect(await owner.getByLabel('Track opens').isChecked()).toBe(false);
    expect((await d.app.accounts.getProjectById(d.projectId)).settings).toMatchObject({ click_tracking: true });

    await owner.getByLabel('Organization name').fill('Acme Inc');
    await owner.getByRole('button', { name: 'Rename' }).click();
    await expect.poll(() => status(owner)).toBe('The organization is renamed.');
    const ownerId = (await d.app.accounts.getUserByEmail('owner@example.com')).id;
    expect((await d.app.accounts.listOrgsOfUser(ownerId))[0]?.name).toBe('Acme Inc');

    await owner.getByLabel("New project's name").fill('Billing');
    await owner.getByRole('button', { name: 'Create project' }).click();
    await expect.poll(() => owner.getByLabel('Project name').inputValue()).toBe('Billing');
    expect((await d.app.accounts.listProjects(d.orgId)).map((p) => p.name).sort()).toEqual(['Billing', 'Web shop']);
  });

  it('shows a VIEWER no write action on the domains, members and settings pages', async () => {
    await member.reload();
    await member.getByRole('heading', { name: 'Emails' }).waitFor();
    const buttons = async () =>
      (await member.getByRole('button').allTextContents()).filter((b) => !/^(Sign out|Copy)/.test(b));

    await open(member, 'Domains', 'Domains');
    await member.getByRole('link', { name: 'mail.example.org' }).waitFor();
    expect(await buttons()).toEqual([]);
    expect(await member.getByLabel('Domain name').count()).toBe(0);
    expect(await seriousViolations(member)).toEqual([]);
    await member.getByRole('link', { name: 'mail.example.org' }).click();
    await member.getByRole('heading', { name: 'DNS records' }).waitFor();
    expect(await member.getByRole('button', { name: /^Copy/ }).count()).toBeGreaterThan(0);
    expect(await buttons()).toEqual([]);
    expect(await seriousViolations(member)).toEqual([]);

    await open(member, 'Members', 'Members');
    await member.getByRole('cell', { name: NEW_MEMBER.email, exact: true }).waitFor();
    expect(await buttons()).toEqual([]);
    expect(await member.getByRole('combobox', { name: /Role/ }).count()).toBe(0);
    expect(await seriousViolations(member)).toEqual([]);

    await open(member, 'Settings', 'Settings');
    await expect.poll(() => member.getByLabel('Project name').inputValue()).toBe('Web shop');
    expect(await member.getByLabel('Project name').isEditable()).toBe(false);
    expect(await member.getByLabel('Track clicks').isDisabled()).toBe(true);
    expect(await member.getByLabel('Organization name').isEditable()).toBe(false);
    expect(await buttons()).toEqual([]);
    expect(await seriousViolations(member)).toEqual([]);
  });
});
