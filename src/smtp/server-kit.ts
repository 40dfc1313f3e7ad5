import type { AddressInfo } from 'node:net';
import type { SMTPServer, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { serverBusy, type BudgetHold, type ByteBudget } from '../lib/byte-budget.ts';
import { reply, type SmtpReplyError } from './replies.ts';

/** Starts `server` on host:port; resolves with the port (a real one when `port` was 0). */
export function listenOn(server: SMTPServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve((server.server.address() as AddressInfo).port);
    });
  });
}

/**
 * Collects a message's DATA and calls `received` with it once the final dot came. Over
 * SIZE the rest is read and dropped as it streams (smtp-server answers 552 5.3.4,
 * rejectOversized); a client that goes away before the final dot leaves nothing. With a
 * `hold`, the bytes are covered by the server's budget as they come; past it the rest is
 * dropped too, and the message is answered `server_busy` (452 4.3.1).
 */
export function collectData(
  stream: SMTPServerDataStream,
  done: (err?: Error | null, message?: string) => void,
  received: (raw: Buffer) => Promise<string>,
  failed: (e: unknown) => SmtpReplyError,
  hold?: BudgetHold,
): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let overBudget = false;
  stream.on('data', (chunk: Buffer) => {
    if (stream.sizeExceeded || overBudget) return;
    bytes += chunk.length;
    if (!hold || hold.cover(bytes)) return void chunks.push(chunk);
    overBudget = true;
    chunks.length = 0;
  });
  stream.on('error', () => (chunks.length = 0));
  stream.on('end', () => {
    if (stream.sizeExceeded) return done(reply(552, '5.3.4', 'The message is larger than the SIZE limit'));
    if (overBudget) return done(failed(serverBusy()));
    received(Buffer.concat(chunks)).then(
      (message) => done(null, message),
      (e: unknown) => done(failed(e)),
    );
  });
}

/** Each session's hold on the server's budget of bytes in flight, from MAIL FROM or DATA until the message is answered. */
export interface SessionHolds {
  /**
   * Holds the SIZE a MAIL FROM declared (RFC 1870), in place of the session's earlier hold,
   * so that a message the budget cannot take is refused before a byte of it is sent.
   * Throws `server_busy`. Call it before any wait: a session that closes meanwhile gives
   * its hold back in `release`, and one taken after that would never be.
   */
  declare(session: SMTPServerSession, args: unknown): void;
  /** The session's hold for its DATA, covered as the bytes arrive (one of 0 when nothing was declared). */
  forData(session: SMTPServerSession): BudgetHold;
  /** Gives the session's hold back: its message answered or refused, or the session closed. */
  release(session: SMTPServerSession): void;
}

export function createSessionHolds(budget: ByteBudget): SessionHolds {
  const holds = new Map<string, BudgetHold>();
  const release = (session: SMTPServerSession) => {
    holds.get(session.id)?.release();
    holds.delete(session.id);
  };
  return {
    declare(session, args) {
      release(session);
      const size = Number(((args || undefined) as { SIZE?: string } | undefined)?.SIZE ?? 0);
      const hold = budget.take(size);
      if (!hold) throw serverBusy(`No room for ${size} bytes now; try again shortly`);
      holds.set(session.id, hold);
    },
    forData(session) {
      const hold = holds.get(session.id) ?? budget.take(0)!; // a hold of 0 is never refused
      holds.set(session.id, hold);
      return hold;
    },
    release,
  };
}
