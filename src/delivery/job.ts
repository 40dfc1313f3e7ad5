import type { FailureKind } from './classify.ts';

export type { FailureKind };

/**
 * What the scheduler hands a delivery worker and what it gets back: plain,
 * structured-cloneable data (workers never open the database).
 */

export interface DeliveryAttachment {
  filename: string;
  content_type: string;
  content: Uint8Array;
  /** Written as the part's Content-ID, so the HTML's `cid:` links resolve (multipart/related). */
  content_id?: string | null;
}

export interface DkimKey {
  domain: string;
  selector: string;
  privateKeyPem: string;
  /** An Ed25519 key signing beside the RSA one (RFC 8463), when the domain has one active. */
  ed25519?: { selector: string; privateKeyPem: string };
}

export interface DeliveryJob {
  email_id: string;
  /** One SMTP transaction per (email, destination domain). */
  destination: string;
  recipients: string[];
  envelope_from: string;
  /**
   * A return path per recipient (same order), when the destination has several: each
   * recipient then gets its own transaction on the same session, with the same message.
   */
  return_paths: string[] | null;
  /**
   * Headers of each recipient's own copy (same order as `recipients`), such as one-click
   * unsubscribe's: each recipient then gets its own transaction with its own message.
   */
  recipient_headers?: Record<string, string>[] | null;
  message_id: string;
  date: string;
  from_email: string;
  from_name: string | null;
  to: string[];
  cc: string[] | null;
  reply_to: string[] | null;
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: DeliveryAttachment[];
  /**
   * The message as its client wrote it (issue 33): sent as it is, with only svc's DKIM signature
   * and the fields raw-out.ts adds (`headers` then holds only svc's own); html, text and
   * attachments are then empty. Absent or null: the message is composed from the fields.
   */
  raw?: Uint8Array | null;
  dkim: DkimKey | null;
  /** The destination's MTA-STS policy (RFC 8461) as the main thread found it; absent: none looked up. */
  sts?: JobSts | null;
  /**
   * DANE (RFC 7672) is on: the server's validating resolver answered with the AD bit at start.
   * `at` is the main thread's clock, against which certificate dates are checked.
   */
  dane?: { at: number } | null;
}

/** An MTA-STS policy handed to a worker, or why none could be had. */
export interface JobSts {
  /** The policy that applies now (fetched or cached), or null. */
  policy: { id: string; mode: 'enforce' | 'testing' | 'none'; mx: string[]; max_age: number } | null;
  /** What went wrong finding it (a failed lookup or fetch), even when a cached policy applies. */
  problem: string | null;
  /** The domain published an MTA-STS record (a failed fetch is then an sts-policy-fetch-error). */
  published: boolean;
}

export interface SmtpReply {
  code: number;
  enhanced: string | null;
  text: string;
}

export interface ConnectionInfo {
  mx_host: string;
  ip: string;
  tls: boolean;
  tls_version: string | null;
  /** The local address the message left from. */
  local_ip: string | null;
  /** The TLS policy the session met: `mta-sts enforce`, `mta-sts testing`, `dane`; absent: none. */
  tls_policy?: string;
}

/** The result of one recipient: a reply from its server, or a failure before any reply. */
export interface RecipientResult {
  recipient: string;
  /** 'mail' = refused at MAIL FROM; 'rcpt' = refused at RCPT TO; 'data' = answered after the message was transmitted. */
  stage: 'mail' | 'rcpt' | 'data' | 'connect';
  reply: SmtpReply | null;
  failure: { kind: FailureKind; message: string } | null;
}

/** RFC 8460's result types (section 4.3), and 'success'. */
export type TlsResultType =
  | 'success'
  | 'starttls-not-supported'
  | 'certificate-host-mismatch'
  | 'certificate-expired'
  | 'certificate-not-trusted'
  | 'validation-failure'
  | 'tlsa-invalid'
  | 'dnssec-invalid'
  | 'dane-required'
  | 'sts-policy-fetch-error'
  | 'sts-policy-invalid'
  | 'sts-webpki-invalid';

/**
 * How one delivery attempt fared against the destination's TLS policy: what TLS reporting
 * (RFC 8460) counts per policy domain and day, and what `svc emails show` and metrics show.
 */
export interface TlsOutcome {
  /** RFC 8460 policy-type. */
  policy_type: 'sts' | 'tlsa' | 'no-policy-found';
  /** RFC 8460 policy-string: the MTA-STS policy's lines, or the TLSA records in presentation form. */
  policy_string: string[];
  /** The recipient domain the policy is for. */
  policy_domain: string;
  /** `enforce` or `testing` for MTA-STS; null otherwise. */
  sts_mode: 'enforce' | 'testing' | null;
  mx_host: string | null;
  receiving_ip: string | null;
  /** The local address the session left from (RFC 8460 sending-mta-ip); null without a session. */
  sending_ip?: string | null;
  result: TlsResultType;
  /** Why, in words, when the result is a failure. */
  failure_reason: string | null;
}

export interface JobResult {
  email_id: string;
  destination: string;
  connection: ConnectionInfo | null;
  dkim_signed: boolean;
  results: RecipientResult[];
  /** Set when the message could not be built at all (an internal failure: FAILED). */
  internal_error: string | null;
  /** What went wrong without stopping the message (an Ed25519 signature left out), for the log. */
  warnings?: string[];
  /** One per MX host tried against a TLS policy (or without one): successes and failures by type. */
  tls?: TlsOutcome[];
}

export interface WorkerSettings {
  hostname: string;
  mxPort: number;
  dnsServers: string[] | null;
  relay: string | null;
  tlsInsecure: boolean;
  /** Extra certificate authorities (PEM) trusted for MX hosts, beside node's own. */
  ca?: string[];
  /** The DNSSEC-validating resolver (host:port) DANE asks; jobs say whether DANE is on. */
  daneResolver?: string | null;
  /** Socket timeouts, ms. */
  connectTimeoutMs: number;
  socketTimeoutMs: number;
}
