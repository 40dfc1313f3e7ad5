// The DMARC report tests' environment and reports (test/dmarc-reports.test.ts and
// test/dmarc-reports-bad.test.ts): receivers mail aggregate reports to the rua= of svc's DMARC
// record, dmarc@bounces.<domain>, through the inbound MX, on real sockets.
import { gzipSync } from 'node:zlib';
import nodemailer from 'nodemailer';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, expect } from 'vitest';
import type { InboundListener } from '../src/smtp/index.ts';
import { startDnsServer, type DnsServer } from './peers/dns.ts';
import { startMxPeer, type MxPeer } from './peers/mx.ts';
import { count } from './harness.ts';
import { listenInbound, settle, startDeliveryEnv, type DeliveryEnv } from './delivery-helpers.ts';
import { login } from './management-helpers.ts';

export const SVC_IP = '192.0.2.10';
export const SPOOFER_IP = '203.0.113.66';
export const REPORT_TO = 'dmarc@bounces.sender.test';
export const DAY = 86_400;

export interface Row {
  ip: string;
  count: number;
  dkim: 'pass' | 'fail';
  spf: 'pass' | 'fail';
  /** auth_results: the DKIM signature's result for sender.test. */
  dkimResult?: string;
}

/** An aggregate report as RFC 7489 appendix C describes it, written out by hand. */
export function reportXml(o: { id: string; org?: string; domain?: string; begin: number; end: number; rows: Row[] }) {
  const records = o.rows
    .map(
      (r) => `
  <record>
    <row>
      <source_ip>${r.ip}</source_ip>
      <count>${r.count}</count>
      <policy_evaluated><disposition>none</disposition><dkim>${r.dkim}</dkim><spf>${r.spf}</spf></policy_evaluated>
    </row>
    <identifiers><header_from>${o.domain ?? 'sender.test'}</header_from></identifiers>
    <auth_results>
      <dkim><domain>${o.domain ?? 'sender.test'}</domain><selector>svc202603</selector><result>${r.dkimResult ?? r.dkim}</result></dkim>
      <spf><domain>bounces.${o.domain ?? 'sender.test'}</domain><scope>mfrom</scope><result>${r.spf}</result></spf>
    </auth_results>
  </record>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <version>1.0</version>
  <report_metadata>
    <org_name>${o.org ?? 'receiver.example'}</org_name>
    <email>noreply-dmarc@receiver.example</email>
    <report_id>${o.id}</report_id>
    <date_range><begin>${o.begin}</begin><end>${o.end}</end></date_range>
  </report_metadata>
  <policy_published>
    <domain>${o.domain ?? 'sender.test'}</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct>
  </policy_published>${records}
</feedback>
`;
}

export type Attachment = { filename: string; content: Buffer; contentType: string };

export const gz = (xml: string): Attachment => ({
  filename: 'receiver.example!sender.test!1!2.xml.gz',
  content: gzipSync(xml),
  contentType: 'application/gzip',
});
export const zip = (xml: string): Attachment => ({
  filename: 'receiver.example!sender.test!1!2.zip',
  content: Buffer.from(zipSync({ 'receiver.example!sender.test!1!2.xml': new TextEncoder().encode(xml) })),
  contentType: 'application/zip',
});
export const plain = (xml: string): Attachment => ({
  filename: 'receiver.example!sender.test!1!2.xml',
  content: Buffer.from(xml),
  contentType: 'text/xml',
});

export const seconds = (ms: number) => Math.floor(ms / 1000);

/** The file's environment: a DNS server, an MX peer, a LIVE delivery env and the inbound MX. */
export interface DmarcEnv {
  dns: DnsServer;
  mx: MxPeer;
  d: DeliveryEnv;
  inbound: InboundListener;
  port: number;
}

/** Starts the file's environment (beforeAll) and stops it (afterAll); `env()` once started. */
export function dmarcSuite() {
  // Each part is kept as soon as it is started, so a start that fails half-way still stops the rest.
  const env: Partial<DmarcEnv> = {};
  const e = () => env as DmarcEnv;
  beforeAll(async () => {
    const dns = (env.dns = await startDnsServer());
    env.mx = await startMxPeer();
    dns.set('dest.test', { MX: [{ exchange: 'mx.dest.test', priority: 10 }] });
    dns.set('mx.dest.test', { A: ['127.0.0.1'] });
    // svc's own outbound address: what its host name resolves to (the a:<hostname> of its SPF).
    dns.set('mta.svc.test', { A: [SVC_IP] });
    env.d = await startDeliveryEnv(dns, { mxPort: String(env.mx.port) });
    Object.assign(env, await listenInbound(env.d.env));
  });
  afterAll(async () => {
    await env.inbound?.close();
    await env.d?.env.close();
    await env.mx?.close();
    await env.dns?.close();
  });
  return {
    env: e,
    /** Mails `attachment` to `to` through the inbound MX as a receiver's reporter would; the server's reply. */
    mailReport: async (
      attachment: Attachment,
      to = REPORT_TO,
      via: { port?: number; localAddress?: string } = {},
    ): Promise<{ ok: boolean; reply: string }> => {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port: via.port ?? e().port,
        secure: false,
        ignoreTLS: true,
        ...(via.localAddress ? { localAddress: via.localAddress } : {}),
      });
      try {
        const info = await transport.sendMail({
          from: 'noreply-dmarc@receiver.example',
          to,
          subject: `Report Domain: sender.test Submitter: receiver.example`,
          text: 'This is an aggregate report from receiver.example.',
          attachments: [attachment],
        });
        return { ok: true, reply: info.response };
      } catch (err) {
        return { ok: false, reply: (err as { response?: string }).response ?? String(err) };
      } finally {
        transport.close();
      }
    },
    /** How many DMARC reports are stored. */
    reports: () => count(e().d.env, 'dmarc_reports'),
    /** Sends a LIVE email now and delivers it; its id. */
    deliveredNow: async (): Promise<string> => {
      const id = await e().d.send(['someone@dest.test']);
      await settle(e().d.env);
      expect((await e().d.email(id)).dkim_signing_status).toBe('expected');
      return id;
    },
    /** GET a domain's DMARC report days, as the organization's owner. */
    reportDays: async (days?: number): Promise<{ status: number; body: any }> => {
      const token = await login(e().d.env, 'owner@example.com', 'owner-password-1');
      const [domain] = await e().d.env.query<{ id: string }>("SELECT id FROM domains WHERE name = 'sender.test'");
      const res = await e().d.env.server.inject({
        method: 'GET',
        url: `/v1/organizations/${e().d.env.init.organization_id}/domains/${domain!.id}/reports${days ? `?days=${days}` : ''}`,
        headers: { authorization: `Bearer ${token}` },
      });
      return { status: res.statusCode, body: res.json() };
    },
  };
}
