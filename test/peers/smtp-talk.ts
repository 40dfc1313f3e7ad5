import { connect, type Socket } from 'node:net';

/** A line-by-line SMTP client for protocol-level tests: what a hand-typed session would see. */
export interface SmtpTalk {
  /** The next complete reply (all its lines, CRLF-joined). */
  reply(): Promise<string>;
  /** Writes `line` + CRLF and resolves with the reply to it. */
  send(line: string): Promise<string>;
  /** Writes raw bytes (a message body, pipelined commands). */
  write(data: string | Buffer): void;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
  socket: Socket;
  close(): void;
}

export async function smtpTalk(port: number): Promise<SmtpTalk> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let buffer = '';
  let lines: string[] = [];
  const replies: string[] = [];
  const waiting: ((r: string) => void)[] = [];
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let i: number;
    while ((i = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      lines.push(line);
      if (/^\d{3}(?: |$)/.test(line)) {
        const r = lines.join('\r\n');
        lines = [];
        const w = waiting.shift();
        if (w) w(r);
        else replies.push(r);
      }
    }
  });
  const reply = () =>
    new Promise<string>((resolve, reject) => {
      const r = replies.shift();
      if (r !== undefined) return resolve(r);
      waiting.push(resolve);
      void closed.then(() => reject(new Error('the server closed the connection')));
    });
  return {
    reply,
    send(line) {
      socket.write(`${line}\r\n`);
      return reply();
    },
    write: (data) => void socket.write(data),
    closed,
    socket,
    close: () => socket.destroy(),
  };
}
