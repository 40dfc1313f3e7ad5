import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A misbehaving mail server on loopback: `hang` accepts the connection and
 * never greets; `garbage` greets, then answers EHLO with a line that is not an
 * SMTP reply; `truncated` greets and closes in the middle of its EHLO reply.
 */
export async function startBadMx(
  mode: 'hang' | 'garbage' | 'truncated',
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (mode === 'hang') return;
    socket.write('220 bad.example ESMTP\r\n');
    socket.once('data', () => {
      if (mode === 'garbage') socket.write('this is not smtp\r\n');
      else socket.end('250-bad.example\r\n250-PIPEL');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
