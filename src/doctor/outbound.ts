import { createSocket } from 'node:dgram';

// Public addresses to route towards; a UDP connect sends no packet, it only picks the route.
const TARGETS = [
  { type: 'udp4', host: '1.1.1.1' },
  { type: 'udp6', host: '2606:4700:4700::1111' },
] as const;

/** The source address the OS would use for `host`, or undefined when there is no route. */
function sourceAddressTowards(type: 'udp4' | 'udp6', host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = createSocket(type);
    const done = (address: string | undefined) => {
      socket.close();
      resolve(address);
    };
    socket.once('error', () => done(undefined));
    socket.connect(53, host, () => {
      try {
        done(socket.address().address);
      } catch {
        done(undefined);
      }
    });
  });
}

/**
 * The addresses mail would leave this machine from when svc has none configured: the OS's
 * choice of source address towards the Internet, IPv4 and IPv6. No traffic leaves the machine.
 */
export async function localOutboundAddresses(): Promise<string[]> {
  const found = await Promise.all(TARGETS.map((t) => sourceAddressTowards(t.type, t.host)));
  return found.filter((a): a is string => a !== undefined);
}
