// The data behind classify.ts read from codes, not words: the enhanced status codes (RFC 3463,
// 3886, 4954, 7372, 7505), the basic codes (RFC 5321), the sentence of each category, and the
// failures before any reply. The rules read from a reply's words are in classify-rules.ts.
import type { BounceCategory, FailureKind } from './classify.ts';
import {
  DOMAIN_DEAD,
  DOMAIN_NO_MAIL,
  SENDER_REFUSED,
  MAILBOX_DISABLED,
  SENDER_DOMAIN_UNRESOLVED,
  type Rule,
} from './classify-rules.ts';

const SENDER: Rule = { category: 'policy-rejection', reason: SENDER_REFUSED };
const AUTH: Rule = { category: 'auth-failure' };

/** By enhanced code "subject.detail" (RFC 3463, 3886, 4954, 7372, 7505), else by "subject". */
export const ENHANCED_RULES: Readonly<Record<string, Rule>> = {
  '1.0': { category: 'invalid-recipient', dead: true }, // other address status: the address was refused
  '1.1': { category: 'invalid-recipient', dead: true }, // bad destination mailbox address
  '1.2': { category: 'dns-mx-failure', dead: true, reason: DOMAIN_DEAD }, // bad destination system
  // Bad destination mailbox address syntax: the address's form, not its existence (qmail sends it
  // for "address must include host name", "too long"): refused and kept (issue 29: when unsure, soft).
  '1.3': { category: 'invalid-recipient' },
  '1.6': { category: 'invalid-recipient', dead: true }, // moved, no forwarding address
  '1.7': SENDER, // bad sender's mailbox address syntax
  '1.8': { category: 'dns-mx-failure', reason: SENDER_DOMAIN_UNRESOLVED }, // bad sender's system address
  '1.10': { category: 'invalid-recipient', dead: true, reason: DOMAIN_NO_MAIL }, // null MX (RFC 7505)
  // Mailbox disabled: "This may be a permanent error if the mailbox will never be re-enabled or a
  // transient error if the mailbox is only temporarily disabled" (RFC 3463), so the code alone
  // cannot say the address is dead: refused and kept (issue 29: when unsure, soft). Words that
  // say so (disabled, inactive, no such user) still make it a dead address.
  '2.1': { category: 'invalid-recipient', reason: MAILBOX_DISABLED },
  '2.2': { category: 'mailbox-full' },
  '2.3': { category: 'message-too-large' }, // message length exceeds administrative limit
  '3': { category: 'unknown' }, // mail system status: the receiver's own trouble
  '3.1': { category: 'unknown' }, // mail system full
  '3.2': { category: 'connection-error' }, // system not accepting network messages
  '3.4': { category: 'message-too-large' },
  '4': { category: 'dns-mx-failure' }, // network and routing status
  '4.1': { category: 'connection-error' }, // no answer from host
  '4.2': { category: 'connection-error' }, // bad connection
  '4.5': { category: 'rate-limited' }, // mail system congestion
  '4.6': { category: 'unknown' }, // routing loop detected: the receiver's own trouble
  '4.7': { category: 'connection-error' }, // delivery time expired: the next hops could not be reached
  '5.3': { category: 'rate-limited' }, // too many recipients
  '7': { category: 'policy-rejection' }, // security or policy status
  '7.8': AUTH,
  '7.9': AUTH,
  '7.10': AUTH,
  '7.11': AUTH,
  '7.20': AUTH,
  '7.21': AUTH,
  '7.22': AUTH,
  '7.23': AUTH,
  '7.24': AUTH,
  '7.25': AUTH,
  '7.26': AUTH,
  '7.27': SENDER, // sender address has null MX
  '7.28': { category: 'rate-limited' }, // mail flood detected
  '7.29': AUTH,
};

/** By basic code, when neither text nor enhanced code says anything. Others are 'unknown'. */
export const BASIC_CODE_RULES: Readonly<Record<number, Rule>> = {
  421: { category: 'connection-error' }, // service not available, closing transmission channel
  530: AUTH, // authentication required (RFC 4954)
  535: AUTH, // authentication credentials invalid
};

export const REASONS: Readonly<Record<BounceCategory, string>> = {
  'invalid-recipient': "the recipient's server says the mailbox does not exist",
  'mailbox-full': "the recipient's mailbox is full",
  'message-too-large': "the message is larger than the recipient's server accepts",
  'content-spam-block': "the recipient's server refused the content of the message as spam or unsafe",
  'policy-rejection': "the recipient's server refused the message for a policy reason",
  'reputation-blocklist': "the recipient's server blocked our sending IP or domain for its reputation",
  greylisting: "the recipient's server asked us to try again later (greylisting)",
  'dns-mx-failure': "the recipient's domain could not be routed to a mail server",
  'connection-error': "the recipient's server was unavailable",
  'rate-limited': "the recipient's server is limiting how fast we send",
  'auth-failure':
    "the message or our server failed the recipient's authentication checks (SPF, DKIM, DMARC or SMTP AUTH)",
  unknown: "the recipient's server gave no clear reason",
};

export const FAILURE_RULES: Readonly<
  Record<FailureKind, { outcome: 'hard' | 'retry'; category: BounceCategory; reason: string }>
> = {
  'dns-nxdomain': { outcome: 'hard', category: 'dns-mx-failure', reason: "the recipient's domain does not exist" },
  'dns-null-mx': {
    outcome: 'hard',
    category: 'invalid-recipient',
    reason: "the recipient's domain publishes a null MX: it accepts no mail",
  },
  'dns-no-address': {
    outcome: 'retry',
    category: 'dns-mx-failure',
    reason: "the recipient's mail servers have no IP address",
  },
  'dns-temporary': {
    outcome: 'retry',
    category: 'dns-mx-failure',
    reason: "the DNS lookup of the recipient's domain failed for now",
  },
  connect: { outcome: 'retry', category: 'connection-error', reason: "we could not connect to the recipient's server" },
  timeout: { outcome: 'retry', category: 'connection-error', reason: "the recipient's server did not answer in time" },
  tls: {
    outcome: 'retry',
    category: 'connection-error',
    reason: "the TLS handshake with the recipient's server failed",
  },
  protocol: {
    outcome: 'retry',
    category: 'connection-error',
    reason: "the recipient's server broke the SMTP protocol",
  },
  disconnected: {
    outcome: 'retry',
    category: 'connection-error',
    reason: "the recipient's server closed the connection",
  },
};
