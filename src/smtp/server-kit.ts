import type { AddressInfo } from 'node:net';
import type { SMTPServer, SMTPServerDataStream } from 'smtp-server';
import { AppError } from '../errors.ts';
import type { BudgetHold } from '../lib/byte-budget.ts';
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
    if (overBudget) return done(failed(new AppError('server_busy')));
    received(Buffer.concat(chunks)).then(
      (message) => done(null, message),
      (e: unknown) => done(failed(e)),
    );
  });
}
