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
  dkim: DkimKey | null;
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
}

/** The result of one recipient: a reply from its server, or a failure before any reply. */
export interface RecipientResult {
  recipient: string;
  /** 'mail' = refused at MAIL FROM; 'rcpt' = refused at RCPT TO; 'data' = answered after the message was transmitted. */
  stage: 'mail' | 'rcpt' | 'data' | 'connect';
  reply: SmtpReply | null;
  failure: { kind: FailureKind; message: string } | null;
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
}

export interface WorkerSettings {
  hostname: string;
  mxPort: number;
  dnsServers: string[] | null;
  relay: string | null;
  tlsInsecure: boolean;
  /** Socket timeouts, ms. */
  connectTimeoutMs: number;
  socketTimeoutMs: number;
}
