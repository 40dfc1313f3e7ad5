import dns2 from 'dns2';
import type { AddressInfo } from 'node:net';

const { Packet } = dns2;

export interface ZoneEntry {
  A?: string[];
  AAAA?: string[];
  MX?: { exchange: string; priority: number }[];
  TXT?: string[];
  /** Answer every question about this name with this error. */
  rcode?: 'NXDOMAIN' | 'SERVFAIL';
}

export interface DnsPeer {
  /** host:port for --dns-servers. */
  server: string;
  zone: Map<string, ZoneEntry>;
  set(name: string, entry: ZoneEntry): void;
  close(): Promise<void>;
}

/** Splits a TXT value into 255-octet character-strings, as DNS requires. */
const chunks = (s: string) => s.match(/.{1,255}/g) ?? [''];

function answers(name: string, type: number, e: ZoneEntry): any[] {
  const base = { name, class: Packet.CLASS.IN, ttl: 60 };
  if (type === Packet.TYPE.A) return (e.A ?? []).map((address) => ({ ...base, type, address }));
  if (type === Packet.TYPE.AAAA) return (e.AAAA ?? []).map((address) => ({ ...base, type, address }));
  if (type === Packet.TYPE.MX)
    return (e.MX ?? []).map((m) => ({ ...base, type, exchange: m.exchange, priority: m.priority }));
  if (type === Packet.TYPE.TXT) return (e.TXT ?? []).map((t) => ({ ...base, type, data: chunks(t) }));
  return [];
}

/** A real DNS server on loopback UDP answering from a zone the test controls. */
export async function startDnsPeer(): Promise<DnsPeer> {
  const zone = new Map<string, ZoneEntry>();
  const server = dns2.createServer({
    udp: true,
    handle: (request: any, send: (r: any) => void) => {
      const response = Packet.createResponseFromRequest(request);
      const [q] = request.questions;
      const entry = zone.get(String(q.name).toLowerCase());
      if (!entry) response.header.rcode = Packet.RCODE.NXDOMAIN;
      else if (entry.rcode) response.header.rcode = Packet.RCODE[entry.rcode];
      else response.answers.push(...answers(q.name, q.type, entry));
      send(response);
    },
  });
  const listening = new Promise<void>((resolve) => server.on('listening', () => resolve()));
  server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  await listening;
  const port = (server.addresses().udp as AddressInfo).port;
  return {
    server: `127.0.0.1:${port}`,
    zone,
    set: (name, entry) => void zone.set(name.toLowerCase(), entry),
    close: () => server.close(),
  };
}
