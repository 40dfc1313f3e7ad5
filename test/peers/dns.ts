import dns2 from 'dns2';
import type { Socket } from 'node:net';

const { Packet } = dns2;
type Packet = InstanceType<typeof Packet>;
type Resource = Packet['answers'][number];

/** What a name answers; a name not in the zone is NXDOMAIN, a type it lacks is NODATA. */
export interface ZoneEntry {
  A?: string[];
  AAAA?: string[];
  MX?: { exchange: string; priority: number }[];
  TXT?: string[];
  /** Reverse DNS: the names an in-addr.arpa or ip6.arpa name points to. */
  PTR?: string[];
  /** An alias: questions of other types follow it, as a recursive resolver does. */
  CNAME?: string;
  /** Answer every question about the name with this rcode. */
  rcode?: 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED';
  /** Never answer (the resolver times out). */
  silent?: boolean;
  /** TLSA records (RFC 6698), for a name such as `_25._tcp.mx.example.com`. */
  TLSA?: { usage: number; selector: number; matchingType: number; data: Buffer }[];
  /**
   * Answers about the name carry the AD bit, as a validating resolver sets it for a signed zone
   * (with a CNAME, only when every name on the way has it). NXDOMAIN with AD: `rcode` and `AD`.
   */
  AD?: boolean;
}

export interface DnsServer {
  /** host:port for dnsServers. */
  server: string;
  set(name: string, entry: ZoneEntry): void;
  /** Adds to what the name answers. */
  merge(name: string, entry: ZoneEntry): void;
  remove(name: string): void;
  /** Names asked, in order ("TXT example.com"). */
  queries: string[];
  close(): Promise<void>;
}

/** TLSA's type code (RFC 6698), which dns2 does not name: its rdata goes out as raw bytes. */
const TLSA = 52;
const typeName = (type: number) => (type === TLSA ? 'TLSA' : (Packet.TYPE_NAME[type] ?? type));

/** Splits a TXT value into 255-octet character-strings, as DNS requires. */
const chunks = (s: string) => s.match(/.{1,255}/g) ?? [''];

function answers(q: { name: string; type: number }, e: ZoneEntry): Resource[] {
  const base = { name: q.name, type: q.type, class: Packet.CLASS.IN, ttl: 60 };
  const { TYPE } = Packet;
  const rows: Partial<Resource>[] =
    q.type === TYPE.A
      ? (e.A ?? []).map((address) => ({ address }))
      : q.type === TYPE.AAAA
        ? (e.AAAA ?? []).map((address) => ({ address }))
        : q.type === TYPE.MX
          ? (e.MX ?? []).map((m) => ({ ...m }))
          : q.type === TYPE.TXT
            ? (e.TXT ?? []).map((t) => ({ data: chunks(t) }))
            : q.type === TYPE.PTR
              ? (e.PTR ?? []).map((domain) => ({ domain }))
              : q.type === TLSA
                ? (e.TLSA ?? []).map((t) => ({ data: tlsaRdata(t) }))
                : [];
  return rows.map((r) => ({ ...base, ...r }) as Resource);
}

function tlsaRdata(t: NonNullable<ZoneEntry['TLSA']>[number]): Buffer {
  return Buffer.concat([Buffer.from([t.usage, t.selector, t.matchingType]), t.data]);
}

/** CNAME hops a resolver follows before it gives up (BIND, Unbound: a handful). */
const MAX_ALIASES = 8;

/**
 * Follows CNAMEs from the question's name, as a recursive resolver answers: the aliases, then
 * the records of the name they end at. A loop (or too long a chain) is SERVFAIL, as BIND and
 * Unbound answer it. A CNAME question is answered with the alias itself.
 */
function follow(q: { name: string; type: number }, lookup: (name: string) => ZoneEntry | undefined) {
  const aliases: Resource[] = [];
  const seen = new Set<string>();
  let name = q.name;
  let entry = lookup(name);
  while (entry?.CNAME !== undefined && !entry.rcode && !entry.silent) {
    const base = { name, class: Packet.CLASS.IN, ttl: 60 };
    if (q.type === Packet.TYPE.CNAME) {
      return { name, entry: {}, aliases: [{ ...base, type: q.type, domain: entry.CNAME } as Resource], loop: false };
    }
    seen.add(name.toLowerCase());
    aliases.push({ ...base, type: Packet.TYPE.CNAME, domain: entry.CNAME } as Resource);
    name = entry.CNAME;
    if (seen.has(name.toLowerCase()) || aliases.length > MAX_ALIASES) return { name, entry, aliases: [], loop: true };
    entry = lookup(name);
  }
  return { name, entry, aliases, loop: false };
}

/**
 * A real DNS server on loopback, UDP and TCP on one port: a 2048-bit DKIM
 * record does not fit a 512-octet UDP answer, so the resolver retries over TCP.
 */
export async function startDnsServer(): Promise<DnsServer> {
  const zone = new Map<string, ZoneEntry>();
  const queries: string[] = [];
  const handle = (request: Packet, send: (r: Packet) => Promise<Buffer>) => {
    const q = request.questions[0]!;
    queries.push(`${typeName(q.type)} ${q.name}`);
    const chain = follow(q, (name) => zone.get(name.toLowerCase()));
    if (chain.entry?.silent) return;
    const response = Packet.createResponseFromRequest(request);
    response.answers.push(...chain.aliases);
    if (chain.loop) response.header.rcode = Packet.RCODE.SERVFAIL;
    else if (!chain.entry) response.header.rcode = Packet.RCODE.NXDOMAIN;
    else if (chain.entry.rcode) response.header.rcode = Packet.RCODE[chain.entry.rcode];
    else response.answers.push(...answers({ ...q, name: chain.name }, chain.entry));
    const names = [q.name, ...chain.aliases.map((a) => (a as Resource & { domain: string }).domain)];
    const rcode = response.header.rcode;
    const signed = names.every((name) => zone.get(name.toLowerCase())?.AD === true);
    // dns2's types leave out the AD bit its header carries (RFC 4035 3.2.3).
    (response.header as typeof response.header & { ad: 0 | 1 }).ad =
      signed && (rcode === 0 || rcode === Packet.RCODE.NXDOMAIN) ? 1 : 0;
    void send(response);
  };
  const { udp, tcp, port } = await listenBoth(handle);
  const sockets = new Set<Socket>();
  tcp.on('connection', (s: Socket) => sockets.add(s.on('close', () => sockets.delete(s))));
  const key = (name: string) => name.toLowerCase();
  return {
    server: `127.0.0.1:${port}`,
    queries,
    set: (name, entry) => void zone.set(key(name), entry),
    merge: (name, entry) => void zone.set(key(name), { ...zone.get(key(name)), ...entry }),
    remove: (name) => void zone.delete(key(name)),
    close: async () => {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      // The resolver keeps its TCP connection open; end it so close() returns.
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

type Handler = dns2.DnsHandler;

/** UDP on a free port, then TCP on the same number; tries again if that TCP port is taken. */
async function listenBoth(handle: Handler, attempts = 5) {
  const udp = dns2.createUDPServer(handle);
  await udp.listen(0, '127.0.0.1');
  const port = udp.address().port;
  const tcp = dns2.createTCPServer(handle);
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, '127.0.0.1', resolve);
    });
  } catch (e) {
    udp.close();
    if (attempts <= 1) throw e;
    return listenBoth(handle, attempts - 1);
  }
  return { udp, tcp, port };
}
