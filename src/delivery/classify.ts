// Turns what a recipient's server said (or failed to say) into one of the three outcomes of a
// recipient attempt in decisions.md ("Email lifecycle"): the address is dead (hard, suppressed),
// this message is refused (soft, final), or temporary (retried). Pure: no clock, no I/O.
// The rules themselves are data, in classify-rules.ts.
import {
  BASIC_CODE_RULES,
  ENHANCED_RULES,
  FAILURE_RULES,
  NO_REASON,
  REASONS,
  TEXT_RULES,
  type Rule,
} from './classify-rules.ts';

export const BOUNCE_CATEGORIES = [
  'invalid-recipient',
  'mailbox-full',
  'message-too-large',
  'content-spam-block',
  'policy-rejection',
  'reputation-blocklist',
  'greylisting',
  'dns-mx-failure',
  'connection-error',
  'rate-limited',
  'auth-failure',
  'unknown',
] as const;
export type BounceCategory = (typeof BOUNCE_CATEGORIES)[number];

export type Outcome = 'delivered' | 'hard' | 'soft' | 'retry';

export interface Classification {
  outcome: Outcome;
  bounce_type: 'hard' | 'soft' | null;
  category: BounceCategory | null;
  suppress: boolean;
  reason: string;
}

/** A reply to RCPT TO or to the end of DATA; `text` may still carry the "550-5.1.1 " line prefixes. */
export interface SmtpReply {
  code: number;
  enhanced?: string | null;
  text: string;
}

/** A failure before any reply: DNS, connection, TLS, timeout, protocol. */
export type FailureKind =
  | 'dns-nxdomain'
  | 'dns-null-mx'
  | 'dns-no-address'
  | 'dns-temporary'
  | 'connect'
  | 'timeout'
  | 'tls'
  | 'protocol'
  | 'disconnected';

export interface TransportFailure {
  kind: FailureKind;
  message: string;
}

// Replies that are temporary whatever their code says: a full mailbox may empty (decisions.md:
// "mailbox full even when sent as 5xx"), greylisting and rate limits lift.
const ALWAYS_TEMPORARY: ReadonlySet<BounceCategory> = new Set(['mailbox-full', 'greylisting', 'rate-limited']);

// One line of a reply: optional basic code ("550-" or "550 "), optional enhanced code, the text.
const REPLY_LINE = /^(?:([2-5])\d\d(?:[ -]|$))?\s*(?:([245]\.\d{1,3}\.\d{1,3})(?:\s|$))?\s*(.*)$/;
const ENHANCED_CODE = /^[245]\.\d{1,3}\.\d{1,3}$/;
// An enhanced code inside the text, e.g. qmail's "(#5.7.1)"; not part of an IP address or version.
const ENHANCED_IN_TEXT = /(?<![\w.])[245]\.\d{1,3}\.\d{1,3}(?![\w.])/;

interface ParsedReply {
  /** 2, 4 or 5; undefined when neither the code nor the text gives a final reply class. */
  replyClass: number | undefined;
  enhanced: string | undefined;
  /** The lines without their codes, joined with spaces, so phrases that wrap still match. */
  text: string;
}

/** Classifies a reply to RCPT TO or to the end of DATA, so the engine knows whether to deliver, bounce, suppress or retry. */
export function classifyReply(reply: SmtpReply): Classification {
  const parsed = parseReply(reply);
  if (parsed.replyClass === 2) return classification('delivered', null, "the recipient's server accepted the message");
  if (parsed.replyClass !== 4 && parsed.replyClass !== 5) {
    return classification('retry', 'connection-error', "the recipient's server sent no valid final SMTP reply");
  }
  const rule = findRule(parsed, Number(reply.code));
  return classification(decideOutcome(parsed.replyClass, rule), rule.category, rule.reason ?? REASONS[rule.category]);
}

/** Classifies a failure that happened before any reply (DNS, connection, TLS, timeout, protocol). */
export function classifyFailure(failure: TransportFailure): Classification {
  const rule = FAILURE_RULES[failure.kind];
  return classification(rule.outcome, rule.category, rule.reason);
}

function parseReply(reply: SmtpReply): ParsedReply {
  const raw = typeof reply.text === 'string' ? reply.text : '';
  const lines = raw
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => REPLY_LINE.exec(line));
  const text = lines.map((line) => line?.[3] ?? '').join(' ');
  const first = lines[0];
  return {
    replyClass: replyClassOf(Number(reply.code)) ?? digitOf(first?.[1]) ?? digitOf(first?.[2]?.[0]),
    enhanced: validEnhanced(reply.enhanced) ?? first?.[2] ?? ENHANCED_IN_TEXT.exec(text)?.[0],
    text,
  };
}

function replyClassOf(code: number): number | undefined {
  return Number.isInteger(code) && code >= 200 && code <= 599 ? Math.floor(code / 100) : undefined;
}

function digitOf(digit: string | undefined): number | undefined {
  return digit === undefined ? undefined : Number(digit);
}

function validEnhanced(enhanced: string | null | undefined): string | undefined {
  const trimmed = typeof enhanced === 'string' ? enhanced.trim() : '';
  return ENHANCED_CODE.test(trimmed) ? trimmed : undefined;
}

/**
 * Text first, enhanced code second, basic code last: servers often send misleading codes.
 * A text with no reason at all ("Rejected") leaves it to a specific enhanced code (5.3.4
 * says size); a code that only names its class (5.7.x: "security or policy") does not
 * give the reply a reason it did not state.
 */
function findRule(parsed: ParsedReply, code: number): Rule {
  if (NO_REASON.test(parsed.text.trim())) {
    return findEnhancedRule(parsed.enhanced, true) ?? BASIC_CODE_RULES[code] ?? { category: 'unknown' };
  }
  return (
    TEXT_RULES.find((rule) => rule.match.test(parsed.text)) ??
    findEnhancedRule(parsed.enhanced, false) ??
    BASIC_CODE_RULES[code] ?? { category: 'unknown' }
  );
}

function findEnhancedRule(enhanced: string | undefined, specificOnly: boolean): Rule | undefined {
  if (enhanced === undefined) return undefined;
  const [, subject, detail] = enhanced.split('.');
  return ENHANCED_RULES[`${subject}.${detail}`] ?? (specificOnly ? undefined : ENHANCED_RULES[subject ?? '']);
}

function decideOutcome(replyClass: 4 | 5, rule: Rule): Outcome {
  if (replyClass === 4 || ALWAYS_TEMPORARY.has(rule.category)) return 'retry';
  return rule.dead === true ? 'hard' : 'soft';
}

// Only a hard bounce suppresses; a retry has no bounce type until the engine's retry window ends.
function classification(outcome: Outcome, category: BounceCategory | null, reason: string): Classification {
  const bounce_type = outcome === 'hard' || outcome === 'soft' ? outcome : null;
  return { outcome, bounce_type, category, suppress: outcome === 'hard', reason };
}
