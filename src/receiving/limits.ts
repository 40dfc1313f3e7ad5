// What the inbound listener takes for a route (decisions.md, "Receiving mail"). Light on
// purpose: the listener reads it at start; the readers of messages load with the first message.
import { LIMITS } from '../limits/index.ts';

export const RECEIVING_LIMITS = {
  /** A received message, as a sent one (SMTP SIZE): 25 MiB. */
  messageBytes: LIMITS.messageBytes,
  /** Attachments a received message may have; each may be as large as the message allows. */
  attachments: 100,
  /** Received fields past this (RFC 5321 section 6.3: "a loop") are refused. */
  maxHops: 30,
} as const;
