import { classifyReply, codesIn, describeRule, replyOfText, type ReplyContext } from '../delivery/classify.ts';
import { print, UsageError } from './io.ts';
import type { Opts } from './commands/kit.ts';

/**
 * `svc bounces classify`: what the classifier makes of a reply, and which rule decided,
 * without a store (issue 29, item 4): the same classifyReply the engine, the DSN reader
 * and the inbound listener call, on the reply read as svc reads any reply known only as text.
 */
export function classify(words: string[], opts: Opts): Promise<void> {
  const text = words.join(' ');
  if (text.trim() === '') throw new UsageError('give the reply to classify, such as "550 5.1.1 User unknown"');
  const { reply, coded } = replyOfText(text, codeOf(text, opts.code));
  const c = classifyReply(reply, contextOf(opts));
  const note =
    reply.code === 550
      ? 'note: no reply code: read as a failed delivery (550); give --code 4xx for a temporary one'
      : 'note: no reply code: read as temporary (450), as its words say; give --code 5xx for a failed delivery';
  print(opts, c, () =>
    [
      ...(coded ? [] : [note]),
      `category: ${c.category ?? '-'}`,
      `type: ${c.outcome}`,
      `suppresses: ${c.suppress ? 'yes' : 'no'}`,
      `reason: ${c.reason}`,
      `rule: ${describeRule(c.rule)}`,
    ].join('\n'),
  );
  return Promise.resolve();
}

/** The reply's basic code: --code, else the one its text gives; undefined when neither gives one. */
function codeOf(text: string, option: unknown): number | undefined {
  const given = typeof option === 'string' ? option : codesIn(text).code?.toString();
  if (given === undefined) return undefined;
  const code = /^\d{3}$/.test(given) ? Number(given) : Number.NaN;
  if (!(code >= 200 && code <= 599)) {
    throw new UsageError(`${given} is not an SMTP reply code: a reply code is 2xx to 5xx`);
  }
  return code;
}

/** --stage (commander took only mail, rcpt or data) and every --sender. */
function contextOf(opts: Opts): ReplyContext {
  const stage = opts.stage as ReplyContext['stage'];
  const senders = Array.isArray(opts.sender) ? opts.sender.map(String) : [];
  return { ...(stage ? { stage } : {}), senders };
}
