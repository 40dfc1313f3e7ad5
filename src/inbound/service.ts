import { AppError } from '../errors.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import {
  basicCodeOf,
  classifyReply,
  parseReturnPath,
  returnPathCovers,
  returnPathsIn,
  type Decision,
  type DeliveryStore,
  type ReturnPath,
} from '../delivery/index.ts';
import { readReport, xtextDecoded, type DsnRecipient, type InboundReport } from './report.ts';
import type { DmarcReports, ReportReceipt } from './dmarc-service.ts';

export interface InboundDeps {
  /** DMARC aggregate reports mailed to dmarc@bounces.<domain>. */
  dmarc?: Pick<DmarcReports, 'accepts' | 'isReportAddress' | 'receive'>;
  delivery: Pick<DeliveryStore, 'findRecipient' | 'recordLateBounce' | 'recordComplaint' | 'explain'>;
  /** The email a return path names: its seq, project, sender and environment. */
  findEmail(
    id: string,
  ): Promise<(Record<string, unknown> & { seq: number; id: string; project_id: string }) | undefined>;
  returnPathKey: () => Promise<Buffer>;
  clock: Clock;
  logger: Logger;
  /** List-Unsubscribe's mailto addresses (tracking/): which they are, and the unsubscribe a message to one makes. */
  unsubscribe?: {
    acceptsMailto(address: string): Promise<boolean>;
    isMailtoAddress(address: string): boolean;
    unsubscribeByMail(address: string): Promise<{ outcome: 'added' | 'already'; emailId: string; recipient: string }>;
  };
  /** Told of every bounce or complaint applied (/metrics). */
  observe?: (outcome: 'bounced' | 'complained', category: string | null, type: string | null, source: string) => void;
}

/** What processing one inbound message did, for the log and `svc inbound process`. */
export interface InboundResult {
  kind: InboundReport['kind'] | 'dmarc' | 'unsubscribe';
  applied: (
    | { email_id: string; recipient: string; status: 'BOUNCED'; bounce_type: string; bounce_category: string }
    | { email_id: string; recipient: string; status: 'COMPLAINED'; feedback_type: string }
  )[];
  ignored: { recipient: string | null; why: string }[];
  /** A DMARC aggregate report's receipt (kind dmarc). */
  report?: ReportReceipt;
  /** The recipients a message to their unsubscribe address took off the list (kind unsubscribe). */
  unsubscribed?: { email_id: string; recipient: string; outcome: 'added' | 'already' }[];
}

type Bounced = Extract<Decision, { kind: 'bounced' }>;

/** The only address of a header section's To field, or null when it has none or several. */
function onlyTo(headers: string): string | null {
  const to = /^to:[ \t]*(.*(?:\r?\n[ \t].*)*)/im.exec(headers)?.[1] ?? '';
  const found = to.match(/[^\s<>,;"']+@[^\s<>,;"']+/g) ?? [];
  return found.length === 1 ? found[0] : null;
}

/**
 * Bounces that arrive after the SMTP transaction (issue 15): a DSN mailed back to an
 * email's return path turns a delivered recipient BOUNCED, classified like a reply,
 * suppressing only a dead address. Forged or stray messages change nothing.
 */
export function createInboundService(deps: InboundDeps) {
  /** The email `address` is the return path of, when svc sent it (LIVE, from that domain). */
  async function emailOf(
    address: string,
  ): Promise<{ rp: ReturnPath; email: NonNullable<Awaited<ReturnType<InboundDeps['findEmail']>>> } | null> {
    const rp = parseReturnPath(address);
    if (!rp) return null;
    const email = await deps.findEmail(rp.emailId);
    if (!email || email.env !== 'LIVE') return null;
    const from = String(email.from_email).toLowerCase();
    return from.slice(from.lastIndexOf('@') + 1) === rp.fromDomain ? { rp, email } : null;
  }

  /**
   * Which recipient of the email a report sent to `target`'s return path is about, when it names
   * `named` (a block's Final- and Original-Recipient, a complaint's Original-Rcpt-To or To):
   * - a named address the return path's tag was made for;
   * - else, when `alone` (the report's only block) and it names no recipient of this email (a
   *   forward's target without ORCPT, a redacted complaint), the recipient the tag was made for:
   *   only that recipient's copy carried the address, so only its mail chain can answer to it;
   * - else nobody: a report to one recipient's return path naming a co-recipient is forged.
   * docs/decisions.md, "Bounces are matched by their return path".
   */
  async function subjectOf(
    target: NonNullable<Awaited<ReturnType<typeof emailOf>>>,
    named: (string | null)[],
    alone: boolean,
  ): Promise<{ address: string } | { why: string }> {
    const key = await deps.returnPathKey();
    const names = [...new Set(named.flatMap((a) => (a ? [a.toLowerCase(), xtextDecoded(a.toLowerCase())] : [])))];
    const covered = names.find((a) => returnPathCovers(key, target.rp, a));
    if (covered) return { address: covered };
    const recipients = (await deps.delivery.explain(target.email.id)).map((r) => r.address.toLowerCase());
    const owner = recipients.find((a) => returnPathCovers(key, target.rp, a));
    if (!owner) return { why: 'the return path was not made for a recipient of this email' };
    if (names.some((a) => recipients.includes(a))) return { why: 'the return path was not made for this recipient' };
    if (!alone) return { why: 'the report names several addresses, none of them the return path’s recipient' };
    return { address: owner };
  }

  async function apply(address: string, report: Extract<InboundReport, { kind: 'dsn' }>, result: InboundResult) {
    const target = await emailOf(address);
    if (!target) return void result.ignored.push({ recipient: null, why: `${address} is not a return path of ours` });
    const failed = report.recipients.filter((r) => r.action === 'failed').length;
    for (const r of report.recipients) {
      // The DSN came to our return path: the sender it may name is that address, or our From.
      const decision = decisionOf(r, [address, String(target.email.from_email)]);
      if (!decision) {
        result.ignored.push({ recipient: r.address, why: `action ${r.action}: nothing to record` });
        continue;
      }
      // The tag was made for one recipient: a DSN naming anyone else is forged.
      const subject = await subjectOf(target, [r.address, r.original], failed === 1);
      if ('why' in subject) {
        result.ignored.push({ recipient: r.address, why: subject.why });
        continue;
      }
      const row = await deps.delivery.findRecipient(target.email.seq, subject.address);
      if (!row) {
        result.ignored.push({ recipient: r.address, why: 'not a recipient of this email' });
        continue;
      }
      const applied = await deps.delivery.recordLateBounce(
        {
          seq: target.email.seq,
          projectId: target.email.project_id,
          emailId: target.email.id,
          recipientId: row.id,
          address: row.address,
        },
        decision,
        'dsn',
        deps.clock.now(),
      );
      if (applied) {
        deps.observe?.('bounced', decision.category, decision.bounce_type, 'dsn');
        result.applied.push({
          email_id: target.email.id,
          recipient: row.address,
          status: 'BOUNCED',
          bounce_type: decision.bounce_type,
          bounce_category: decision.category,
        });
      } else {
        result.ignored.push({ recipient: r.address, why: `the recipient is ${row.status}, not delivered` });
      }
    }
  }

  /**
   * A spam complaint (ARF): the email is the one of the return path the report was sent
   * to, or of the Return-Path the receiver stamped on the reported message; the recipient
   * is Original-Rcpt-To, or the reported message's only To address.
   */
  async function complain(rcptTo: string[], report: Extract<InboundReport, { kind: 'arf' }>, result: InboundResult) {
    let target: Awaited<ReturnType<typeof emailOf>> = null;
    for (const address of [...rcptTo, ...returnPathsIn(report.originalHeaders)]) {
      if ((target = await emailOf(address))) break;
    }
    if (!target) return void result.ignored.push({ recipient: null, why: 'the report names no email of ours' });
    const named = report.originalRcptTo ?? onlyTo(report.originalHeaders);
    const subject = await subjectOf(target, [named], true);
    if ('why' in subject) return void result.ignored.push({ recipient: named, why: subject.why });
    const recipient = subject.address;
    const row = await deps.delivery.findRecipient(target.email.seq, recipient);
    if (!row) return void result.ignored.push({ recipient, why: 'not a recipient of this email' });
    const r = {
      seq: target.email.seq,
      projectId: target.email.project_id,
      emailId: target.email.id,
      recipientId: row.id,
      address: row.address,
    };
    if (await deps.delivery.recordComplaint(r, report.feedbackType, 'arf', deps.clock.now())) {
      deps.observe?.('complained', null, null, 'arf');
      result.applied.push({
        email_id: target.email.id,
        recipient: row.address,
        status: 'COMPLAINED',
        feedback_type: report.feedbackType,
      });
    } else {
      result.ignored.push({ recipient, why: `the recipient is ${row.status}, not delivered` });
    }
  }

  /**
   * A message to unsubscribe addresses (RFC 2369 mailto): whatever it says, each address's
   * recipient is unsubscribed; an address svc did not make changes nothing.
   */
  async function unsubscribeAll(addresses: string[], u: NonNullable<InboundDeps['unsubscribe']>) {
    const result: InboundResult = { kind: 'unsubscribe', applied: [], ignored: [], unsubscribed: [] };
    for (const address of addresses) {
      try {
        const r = await u.unsubscribeByMail(address);
        result.unsubscribed!.push({ email_id: r.emailId, recipient: r.recipient, outcome: r.outcome });
      } catch (e) {
        if (!(e instanceof AppError) || e.code !== 'not_found') throw e;
        result.ignored.push({ recipient: null, why: `${address} is not an unsubscribe address of ours` });
      }
    }
    return result;
  }

  return {
    /**
     * RCPT TO at the inbound listener: only return paths and unsubscribe addresses of emails
     * svc sent, and report addresses of its domains.
     */
    async accepts(address: string): Promise<boolean> {
      if (deps.unsubscribe?.isMailtoAddress(address)) return deps.unsubscribe.acceptsMailto(address);
      return (await emailOf(address)) !== null || ((await deps.dmarc?.accepts(address)) ?? false);
    },

    /**
     * Applies one inbound message sent to the return paths `rcptTo`; one sent to a report
     * address is a DMARC aggregate report (throws report_refused when it cannot be used,
     * report_limit_reached past its sender's daily limit). `senderIp`: the connecting client's.
     */
    async process(raw: Buffer, rcptTo: string[], senderIp: string | null = null): Promise<InboundResult> {
      if (deps.dmarc && rcptTo.some((a) => deps.dmarc!.isReportAddress(a))) {
        return { kind: 'dmarc', applied: [], ignored: [], report: await deps.dmarc.receive(raw, rcptTo, senderIp) };
      }
      const u = deps.unsubscribe;
      const mailtos = u ? rcptTo.filter((a) => u.isMailtoAddress(a)) : [];
      if (u && mailtos.length > 0) {
        const result = await unsubscribeAll(mailtos, u);
        deps.logger.info({ rcpt_to: rcptTo, ...result }, 'inbound unsubscribe processed');
        return result;
      }
      const report = await readReport(raw);
      const result: InboundResult = { kind: report.kind, applied: [], ignored: [] };
      if (report.kind === 'dsn') for (const address of rcptTo) await apply(address, report, result);
      else if (report.kind === 'arf') await complain(rcptTo, report, result);
      else
        result.ignored.push({ recipient: null, why: report.kind === 'auto-reply' ? 'an auto-reply' : report.reason });
      deps.logger.info({ rcpt_to: rcptTo, ...result }, 'inbound message processed');
      return result;
    },
  };
}

export type InboundService = ReturnType<typeof createInboundService>;

/**
 * A recipient the remote server gave up on (Action: failed) as a final bounce: hard only
 * when its reply says the address is dead (classifyReply); a 4xx it gave up on is soft.
 */
function decisionOf(r: DsnRecipient, senders: string[]): Bounced | null {
  if (r.action !== 'failed') return null;
  const code = basicCodeOf(r.diagnostic?.code, r.status);
  const text = r.diagnostic?.text ?? '';
  const c = classifyReply({ code, enhanced: r.status, text }, { senders });
  const hard = c.outcome === 'hard';
  return {
    kind: 'bounced',
    bounce_type: hard ? 'hard' : 'soft',
    category: c.category ?? 'unknown',
    suppress: hard,
    reply: { code, enhanced: r.status, text },
    reason: c.reason,
    rule: c.rule,
  };
}
