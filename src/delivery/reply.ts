import type { FailureKind, SmtpReply } from './job.ts';

const ENHANCED = /\b([245]\.\d{1,3}\.\d{1,3})\b/;

/** Splits a server reply ("550-5.1.1 …\n550 5.1.1 …") into code, enhanced code and text. */
export function parseReply(response: string | undefined, fallbackCode?: number): SmtpReply | null {
  const raw = (response ?? '').trim();
  const m = /^(\d{3})[ -]?/.exec(raw);
  const code = m ? Number(m[1]) : fallbackCode;
  if (!code) return null;
  const lines = raw.split(/\r?\n/).map((l) => l.replace(/^\d{3}[ -]?/, '').trim());
  const enhanced = ENHANCED.exec(lines[0] ?? '')?.[1] ?? null;
  const text = lines.map((l) => (enhanced && l.startsWith(enhanced) ? l.slice(enhanced.length).trim() : l)).join('\n');
  return { code, enhanced, text };
}

/** What a nodemailer connection error means for delivery (no usable reply came). */
export function failureOf(err: { code?: string; message?: string }): { kind: FailureKind; message: string } {
  const message = err.message ?? 'connection failed';
  switch (err.code ?? '') {
    case 'ETIMEDOUT':
      return { kind: 'timeout', message };
    case 'ETLS':
      return { kind: 'tls', message };
    case 'EPROTOCOL':
      return { kind: 'protocol', message };
    case 'ECONNECTION':
    case 'ESOCKET':
      return { kind: /closed|ended|reset/i.test(message) ? 'disconnected' : 'connect', message };
    default:
      return { kind: /certificate|tls|ssl/i.test(message) ? 'tls' : 'connect', message };
  }
}
