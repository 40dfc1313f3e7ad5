// Turns what a recipient's server said (or failed to say) into one of the three outcomes of a
// recipient attempt in decisions.md ("Email lifecycle"): the address is dead (hard, suppressed),
// this message is refused (soft, final), or temporary (retried). Pure: no clock, no I/O.
// The rules themselves are data, in classify-rules.ts (words) and classify-codes.ts (codes).
import { aboutSender, saysTemporary, unsure } from './classify-doubt.ts';
import { BASIC_CODE_RULES, ENHANCED_RULES, FAILURE_RULES, REASONS } from './classify-codes.ts';
import { NO_REASON, TEXT_RULES, type Rule } from './classify-rules.ts';

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
  /** Which rule decided, so an operator can tell a wrong one (issue 29, item 4). */
  rule: DecidingRule;
}

/**
 * What decided a classification: the reply's text (a provider's own code in it, or words),
 * its enhanced status code, its basic code, the default for a reply that says nothing, the
 * sender rule (a reply about our sender is never a dead recipient), or a failure before any
 * reply. `matched` is what was read: the words or code that matched.
 */
export interface DecidingRule {
  by: 'text' | 'provider-text' | 'enhanced-code' | 'basic-code' | 'default' | 'sender' | 'transport' | 'accepted';
  matched: string | null;
}

/** What is known of the attempt a reply answered, beyond the reply itself. */
export interface ReplyContext {
  /** The command the reply answered: MAIL FROM is about our sender by the protocol itself. */
  stage?: 'mail' | 'rcpt' | 'data';
  /** Our sender's addresses (envelope sender, From): a reply that names one is about the sender. */
  senders?: readonly string[];
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

/** The words a relaying server wraps around the reply it got ("refused to accept your message (DATA), with …"). */
const WRAPPER =
  /\brefused to accept your message \(\w+\),? with the following error message:?|(?:- )?\bUnknown address error\b/i;

const EMAIL_ADDRESS = /[\w+=-]+(?:\.[\w+=-]+)*@[\w-]+(?:\.[\w-]+)+/g;

/** A DSN's "MAIL FROM: 550 …": the command the reply answered, then the reply. */
const STAGE_PREFIX = /^(MAIL FROM|RCPT TO|DATA)\s*:\s*(?=[245]\d\d\b)/i;

/** Postfix's note of the command a reply answered ("(in reply to MAIL FROM command)"): a stage, not words. */
const IN_REPLY_TO = /\(?in reply to (MAIL FROM|RCPT TO|DATA|end of DATA) command\)?/i;

/** A rule found, and how. */
export interface Found {
  rule: Rule;
  decided: DecidingRule;
}

const STAGES: Readonly<Record<string, ReplyContext['stage']>> = {
  'MAIL FROM': 'mail',
  'RCPT TO': 'rcpt',
  DATA: 'data',
  'END OF DATA': 'data',
};

export interface ParsedReply {
  /** The command the reply answered, when its text says so. */
  stage: ReplyContext['stage'] | undefined;
  /** 2, 4 or 5; undefined when neither the code nor the text gives a final reply class. */
  replyClass: number | undefined;
  enhanced: string | undefined;
  /** The lines without their codes, joined with spaces, so phrases that wrap still match. */
  text: string;
  /**
   * The text with each email address written `a@b`: the rules read the reply's words, not the
   * words of an address ("bounces@sender.example" names no sender role, "x@spamfilter.example" no spam).
   */
  words: string;
}

/**
 * Classifies a reply to MAIL FROM, RCPT TO or the end of DATA (or a DSN's diagnostic), so the
 * engine knows whether to deliver, bounce, suppress or retry. The same function decides for
 * synchronous replies, DSNs and bounces the inbound listener receives.
 */
export function classifyReply(reply: SmtpReply, context: ReplyContext = {}): Classification {
  const parsed = parseReply(reply);
  if (parsed.replyClass === 2) {
    return classification('delivered', null, "the recipient's server accepted the message", {
      by: 'accepted',
      matched: null,
    });
  }
  if (parsed.replyClass !== 4 && parsed.replyClass !== 5) {
    return classification('retry', 'connection-error', "the recipient's server sent no valid final SMTP reply", {
      by: 'default',
      matched: null,
    });
  }
  const known: ReplyContext =
    context.stage === undefined && parsed.stage ? { ...context, stage: parsed.stage } : context;
  const found = aboutSender(unsure(findRule(parsed, Number(reply.code)), parsed), parsed, known);
  const { rule } = found;
  const reason = rule.reason ?? REASONS[rule.category];
  return classification(decideOutcome(parsed.replyClass, rule), rule.category, reason, found.decided);
}

/**
 * The basic code of a reply known only as text (a DSN's diagnostic, a reply pasted into `svc
 * bounces classify`): its own when it has one, else the class of its enhanced status (4.x.x is
 * temporary), else a failed delivery, 550: the DSN that carried it said the delivery failed.
 */
export function basicCodeOf(code: number | null | undefined, enhanced: string | null | undefined): number {
  return code ?? (enhanced?.trim().startsWith('4') ? 450 : 550);
}

/**
 * A reply known only as its text (a DSN's diagnostic without its fields, one pasted into `svc
 * bounces classify`), as svc reads it: the codes it carries or quotes (codesIn); with no basic
 * code, the class of its enhanced status; with neither code, a delivery that is temporary when
 * its words say so (a DSN's "Action: delayed") and failed (550) otherwise. `coded` says whether
 * the text (or `code`, given beside it) carried any code at all.
 */
export function replyOfText(text: string, code?: number): { reply: SmtpReply; coded: boolean } {
  const codes = codesIn(text);
  const given = code ?? codes.code;
  const coded = given !== undefined || codes.enhanced !== undefined;
  const basic = coded || !saysTemporary(text) ? basicCodeOf(given, codes.enhanced) : 450;
  return { reply: { code: basic, enhanced: codes.enhanced ?? null, text }, coded };
}

/**
 * The codes of a reply known only as text: its leading basic code and enhanced status, else
 * those of the reply it quotes, as a relaying server or a DSN writes it ("host mx.example said:
 * 550 5.1.1 …", "Remote Server returned '550 5.1.1 …'", "#550 4.4.7 …", "after DATA: 450 …").
 * The enhanced status may also stand alone in the text ("(#5.7.1)").
 */
export function codesIn(text: string): { code: number | undefined; enhanced: string | undefined } {
  const m = LEADING_CODES.exec(text) ?? QUOTED_CODES.exec(text);
  return {
    code: m?.[1] === undefined ? undefined : Number(m[1]),
    enhanced: m?.[2] ?? ENHANCED_IN_TEXT.exec(text)?.[0],
  };
}

const LEADING_CODES = /^\s*(\d{3})(?:[ -]|\r?\n|$)(?:\s*([245]\.\d{1,3}\.\d{1,3})(?:\s|$))?/;
const QUOTED_CODES =
  /(?:\bsaid:?\s+|\breturned\s+['"]?|['"#]|:\s+)([245]\d\d)(?=[\s-])(?:[\s-]+([245]\.\d{1,3}\.\d{1,3})(?![\w.]))?/;

/** Classifies a failure that happened before any reply (DNS, connection, TLS, timeout, protocol). */
export function classifyFailure(failure: TransportFailure): Classification {
  const rule = FAILURE_RULES[failure.kind];
  return classification(rule.outcome, rule.category, rule.reason, { by: 'transport', matched: failure.kind });
}

function parseReply(reply: SmtpReply): ParsedReply {
  const raw = typeof reply.text === 'string' ? reply.text : '';
  const lines = raw
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => REPLY_LINE.exec(line));
  // qmail's logs write a reply with underscores for spaces ("_does_not_like_recipient./Remote_host_said:_").
  const joined = lines
    .map((line) => line?.[3] ?? '')
    .join(' ')
    .normalize('NFC');
  const spaced = (joined.match(/_/g)?.length ?? 0) >= 5 && (joined.match(/ /g)?.length ?? 0) <= 3;
  // A relaying server's wrapper says "refused" of any reply it relays: only the reply inside counts.
  // A link's query string is data, not words ("…/bounce?sender=user%40example.org").
  const unwrapped = (spaced ? joined.replace(/_/g, ' ') : joined).replace(WRAPPER, '');
  const stage = IN_REPLY_TO.exec(unwrapped)?.[1] ?? STAGE_PREFIX.exec(unwrapped)?.[1];
  const text = spelledOut(unwrapped.replace(IN_REPLY_TO, '').replace(STAGE_PREFIX, ''))
    .replace(/(https?:\/\/[^\s?]+)\?\S*/g, '$1')
    .trim();
  const first = lines[0];
  return {
    stage: stage === undefined ? undefined : STAGES[stage.toUpperCase()],
    replyClass: replyClassOf(Number(reply.code)) ?? digitOf(first?.[1]) ?? digitOf(first?.[2]?.[0]),
    enhanced: validEnhanced(reply.enhanced) ?? first?.[2] ?? ENHANCED_IN_TEXT.exec(text)?.[0],
    text,
    words: text.replace(EMAIL_ADDRESS, 'a@b'),
  };
}

/**
 * Exchange's component codes in words ("RESOLVER.ADR.RecipNotFound" is "RESOLVER ADR Recipient
 * Not Found", "STOREDRV.Deliver.Exception:QuotaExceededException" "… Quota Exceeded Exception"),
 * so the rules read them as they read any reply.
 */
function spelledOut(text: string): string {
  return text.replace(COMPONENT_CODE, (code) =>
    code
      .replace(/[.:]/g, ' ')
      .replace(/([a-z])(?=[A-Z])/g, '$1 ')
      .replace(/\bRecip\b/g, 'Recipient'),
  );
}

const COMPONENT_CODE = /\b[A-Z]{4,}(?:\.[A-Za-z]+)+(?::[A-Za-z]+)?\b/g;

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
function findRule(parsed: ParsedReply, code: number): Found {
  const byCode = (specificOnly: boolean): Found | undefined => {
    const enhanced = findEnhancedRule(parsed.enhanced, specificOnly);
    if (enhanced) return { rule: enhanced, decided: { by: 'enhanced-code', matched: parsed.enhanced! } };
    const basic = BASIC_CODE_RULES[code];
    return basic ? { rule: basic, decided: { by: 'basic-code', matched: String(code) } } : undefined;
  };
  const fallback: Found = { rule: { category: 'unknown' }, decided: { by: 'default', matched: null } };
  if (NO_REASON.test(parsed.words.trim())) return byCode(true) ?? fallback;
  for (const rule of TEXT_RULES) {
    const m = rule.match.exec(parsed.words);
    if (!m) continue;
    // Words that refuse the recipient without saying it is dead ("destinataire invalide"), with
    // a code that says the mailbox is bad (X.1.1): the code says what the words left open.
    const dead =
      rule.category === 'invalid-recipient' && rule.dead !== true && findEnhancedRule(parsed.enhanced, true)?.dead;
    const found = dead ? { ...rule, dead: true } : rule;
    return { rule: found, decided: { by: PROVIDER_CODE.test(m[0]) ? 'provider-text' : 'text', matched: m[0] } };
  }
  return byCode(false) ?? fallback;
}

/** A provider's own code or name in a reply (Yahoo's [TSS04], NetEase's HL:IPB, Outlook's S3150, Proofpoint's ipcheck). */
const PROVIDER_CODE =
  /\[[A-Z]{2,4}\d{2}\]|\b(?:HL|RP|DT):[A-Z]{3}\b|\(S\d{3,4}\)|\(AS\d+\)|AS\(\d+\)|RULE3_\d|ipcheck\.proofpoint|mail-abuse\.com|mimecast|\bdd this user/i;

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
function classification(
  outcome: Outcome,
  category: BounceCategory | null,
  reason: string,
  rule: DecidingRule,
): Classification {
  const bounce_type = outcome === 'hard' || outcome === 'soft' ? outcome : null;
  return { outcome, bounce_type, category, suppress: outcome === 'hard', reason, rule };
}

/** One line saying which rule decided, for `svc emails show` and `svc bounces classify`. */
export function describeRule(rule: DecidingRule): string {
  const what = rule.matched === null ? '' : ` "${rule.matched}"`;
  switch (rule.by) {
    case 'text':
      return `the reply's words${what}`;
    case 'provider-text':
      return `the provider's own code${what}`;
    case 'enhanced-code':
      return `the enhanced status code${what}`;
    case 'basic-code':
      return `the basic reply code${what}`;
    case 'sender':
      return `the sender rule: the reply is about our sender (${rule.matched ?? ''}), never a dead recipient`;
    case 'transport':
      return `a failure before any reply${what}`;
    case 'accepted':
      return 'a 2xx reply';
    case 'default':
      return 'the default: the reply gives no reason';
  }
}
