// The new text of a reply, without the quoted history and the signature (issue 34: "the reply
// text stripped of quoted history where it can be"), by email-reply-parser (GitHub's
// EmailReplyParser rules). It finds Gmail's and Apple Mail's "On … wrote:", `>` quotes,
// Outlook's "-----Original Message-----", an underscore rule, a "From: Name <address>" header
// block, a "-- " signature and "Sent from my …". It misses Outlook's header block when the
// From line has no address ("From: Ada Lovelace" then "Sent: …", Outlook's way with names in
// the address book): that block is cut here. An answer written between quoted lines keeps what
// the library shows of it (the unquoted lines). What it cannot do: quotes with no header and
// no `>` (a reply typed above a forwarded body), signatures with no separator, HTML-only mail.
import EmailReplyParser from 'email-reply-parser';

/** An Outlook reply header the library misses: "From: name" on one line, "Sent:" or "Date:" on the next. */
const OUTLOOK_HEADER = /^[ \t]*\*?From:\*?[ \t].*\r?\n[ \t]*\*?(Sent|Date):\*?[ \t]/m;

/** The text of a reply as its writer typed it, without quoted history or signature. */
export function replyTextOf(text: string): string {
  const header = OUTLOOK_HEADER.exec(text);
  const mine = header ? text.slice(0, header.index) : text;
  return new EmailReplyParser().parseReply(mine).trimEnd();
}
