// When a reading of an address as dead gives way (issue 29, items 3 and "when unsure, soft"):
// the reply is about our sender, says it is temporary, or only its code says dead while its
// words speak of the message. classify.ts applies these to the rule it found.
import type { Found, ParsedReply, ReplyContext } from './classify.ts';
import { HEDGE, LATER } from './classify-languages.ts';

/**
 * Words that say a reply is temporary whatever its code ("Host not found, try again"): a rule
 * reading the address as dead then gives way, since the receiver itself is unsure. Not when
 * they are denied: "I'm not going to try again", Exim's "retry timeout exceeded" (it gave up).
 */
const SAYS_TEMPORARY =
  /(?<!\b(?:not|never|no longer) (?:going to |be |to )?|n't (?:be )?|\bno )(?:try(?:ing)? again|retr(?:y|ied)(?! time ?out))\b|\btemp(?:orar(?:y|ily)|_failure)\b|\blater\b|\bpostponed\b|\bdeferred\b|\bdelayed\b/i;

/** Whether a reply's words say it is temporary, in English or the languages of classify-languages.ts. */
export function saysTemporary(text: string): boolean {
  return SAYS_TEMPORARY.test(text) || LATER.test(text);
}

/**
 * A dead-address rule on a reply that says it is temporary, or a dead-address code on words
 * about the message: soft and kept (issue 29: "when unsure, soft").
 */
export function unsure(found: Found, parsed: ParsedReply): Found {
  if (found.rule.dead !== true) return found;
  // Only the code says the address is dead while the words speak of the message: unsure too.
  const aboutMessage = found.decided.by === 'enhanced-code' && ABOUT_MESSAGE.test(parsed.text);
  // Words that only say the address may be dead ("the group may not exist"): unsure.
  const hedged = found.decided.by === 'text' && HEDGE.test(clauseOf(parsed.words, found.decided.matched!));
  if (!saysTemporary(parsed.text) && !aboutMessage && !hedged) return found;
  return { ...found, rule: { ...found.rule, dead: false } };
}

/**
 * The clause of a text that holds what a rule matched: from the sentence or clause mark before
 * it to the one after it (the dot of an address or a domain does not end a clause).
 */
function clauseOf(text: string, matched: string): string {
  const at = text.indexOf(matched);
  if (at < 0) return matched;
  const before = text.slice(0, at).search(/[^.;:!?。！？\n]*$/);
  const after = text.slice(at + matched.length).search(/[.;!?。！？\n](?![\p{L}\p{N}])/u);
  return text.slice(before, after < 0 ? undefined : at + matched.length + after);
}

/** Words that make the message, not the mailbox, the subject of a reply ("will not accept delivery of this message"). */
const ABOUT_MESSAGE = /\b(?:this|your|the) (?:message|mail|e-?mail)\b(?! ?(?:address|account|box))/i;

/** RFC 3463's codes about the sender: bad sender mailbox syntax, bad sender system, sender null MX (RFC 7505). */
const SENDER_CODES = new Set(['1.7', '1.8', '7.27']);

/**
 * Words that make our sender the subject of a reply (RFC 5321's roles, the checks made of it, and
 * "sender" in the languages receivers answer in). A callout is the sender's only in Exim's
 * sender-callout form ("Called: … Sent: RCPT TO:<…> Response: …"); its "Callout verification
 * failed" is the recipient callout's answer (Exim's verify.c: is_recipient).
 */
const SENDER_ROLE =
  /\bsender\b|\bmail from\b|\benvelope[- ]from\b|\bfrom address\b|\breturn[- ]path\b|\boriginator\b|\bCalled:\s+\S+\s+Sent:\s+RCPT TO:|\bsending (?:for|from) (?:this|your|the) (?:account|user|address)\b|\babsender\b|expéditeur|\bremitente\b|\bmittente\b|\bremetente\b|\bafzender\b|\bnadawca\b|odesílatel|отправител|发件人|寄件人|送信者|발신자/i;

/**
 * Issue 29, item 3: a reply about our sender is never a dead recipient. A rule that would
 * bounce the address as dead gives way when the reply is about the sender: it answered MAIL
 * FROM, carries a sender status code (X.1.7, X.1.8, X.7.27), names one of our sender
 * addresses, or names the sender role. Then it is the receiver refusing our sender
 * (policy-rejection, soft, never suppressed). Only a reply about the recipient suppresses;
 * naming both roles is unsure, and unsure is soft.
 */
export function aboutSender(found: Found, parsed: ParsedReply, context: ReplyContext): Found {
  if (found.rule.dead !== true) return found;
  const code = parsed.enhanced?.split('.').slice(1).join('.');
  const text = parsed.text.toLowerCase();
  const named = context.senders?.find((s) => s !== '' && text.includes(s.toLowerCase()));
  const evidence =
    context.stage === 'mail'
      ? 'a reply to MAIL FROM'
      : code !== undefined && SENDER_CODES.has(code)
        ? `enhanced code ${parsed.enhanced} (about the sender)`
        : (named ?? SENDER_ROLE.exec(parsed.words)?.[0]);
  if (evidence === undefined) return found;
  return {
    rule: { category: 'policy-rejection', reason: SENDER_REFUSED_REASON },
    decided: { by: 'sender', matched: evidence },
  };
}

const SENDER_REFUSED_REASON = "the recipient's server refused our sender address, not the recipient";
