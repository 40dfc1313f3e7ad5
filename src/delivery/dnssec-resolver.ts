/**
 * A DNS stub client for DANE (RFC 7672): it asks the one resolver the operator names
 * (`daneResolver`) and trusts its AD bit, which says the resolver validated the answer with
 * DNSSEC. Node's resolver (c-ares) neither sets DO nor shows AD, hence this small client: UDP,
 * then TCP when the answer is truncated, dns-packet for the wire format.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { randomInt } from 'node:crypto';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, TlsaData } from 'dns-packet';
import { ioTimeout, type Clock } from '../lib/clock.ts';

export type Security = 'secure' | 'insecure' | 'bogus';

export interface TlsaRecord {
  usage: number;
  selector: number;
  matchingType: number;
  data: Buffer;
}

export type TlsaAnswer =
  /** AD set, TLSA present; `base` is the TLSA base domain they were found at (RFC 7672 2.2.2). */
  | { state: 'secure'; records: TlsaRecord[]; base: string }
  /** AD set, NXDOMAIN or NODATA: authenticated denial, no DANE. */
  | { state: 'secure-none' }
  /** An answer without AD: DANE does not apply. */
  | { state: 'insecure' }
  /** SERVFAIL from the validating resolver (RFC 7672 2.1.1: defer). */
  | { state: 'bogus'; reason: string }
  /** No answer: timeout, network, a malformed or refused answer. */
  | { state: 'error'; reason: string };

export interface DnssecResolver {
  /** Whether the named resolver validates: asks `. SOA` (the root is signed) and checks AD. */
  probe(): Promise<{ validating: boolean; reason: string }>;
  /**
   * The security of a domain's MX RRset (RFC 7672 2.2.1: DANE applies only to MX hosts from a
   * secure MX RRset); for a domain without MX, that of its own address records.
   */
  mxSecurity(domain: string): Promise<Security | 'error'>;
  /**
   * The MX hosts of the validated answer (lower case, no trailing dot); the domain itself when it
   * has no MX; null when it could not be asked. DANE tries only these (RFC 7672 2.2.1).
   */
  mxHosts(domain: string): Promise<string[] | null>;
  /**
   * TLSA of `_<port>._tcp.<host>`. When the host's address records come from a secure CNAME
   * chain, the expanded name is asked first and the host's own name if that has none (2.2.2).
   */
  tlsa(host: string, port: number): Promise<TlsaAnswer>;
}

export interface DnssecResolverOptions {
  /** How long one query waits for its answer, per transport (default 5 s). */
  timeoutMs?: number;
  /** Answers kept (default 1000); the oldest goes first. */
  cacheSize?: number;
}

/** What one question got: its rcode, whether AD was set, and its answer records. */
interface Reply {
  rcode: string;
  ad: boolean;
  answers: Answer[];
  /** How long a denial may be kept (RFC 2308 5: the SOA's TTL and minimum), in seconds. */
  negativeTtl: number;
}

type Outcome = { ok: true; reply: Reply } | { ok: false; reason: string };

/** DNS Flag Day 2020's advice: an EDNS payload size that avoids IP fragmentation. */
const UDP_PAYLOAD = 1232;
/** A denial without a SOA to say how long is kept this long (seconds). */
const NEGATIVE_TTL = 60;
/** A TTL beyond this is cut to it (seconds): a day, as resolvers cap it. */
const MAX_TTL = 86_400;

export function createDnssecResolver(
  server: string,
  clock: Clock,
  options: DnssecResolverOptions = {},
): DnssecResolver {
  const peer = parseServer(server);
  const timeoutMs = options.timeoutMs ?? 5000;
  const cache = createCache(clock, options.cacheSize ?? 1000);

  async function ask(name: string, type: 'SOA' | 'MX' | 'A' | 'TLSA'): Promise<Outcome> {
    const key = `${type} ${name.toLowerCase()}`;
    const kept = cache.get(key);
    if (kept) return { ok: true, reply: kept };
    const outcome = await exchange(peer, name, type, timeoutMs);
    if (outcome.ok && (outcome.reply.rcode === 'NOERROR' || outcome.reply.rcode === 'NXDOMAIN')) {
      cache.set(key, outcome.reply);
    }
    return outcome;
  }

  return {
    async probe() {
      const asked = await ask('.', 'SOA');
      if (!asked.ok) return { validating: false, reason: `${server}: ${asked.reason}` };
      if (asked.reply.rcode !== 'NOERROR') {
        return { validating: false, reason: `${server} answered ${asked.reply.rcode} for ". SOA"` };
      }
      return asked.reply.ad
        ? { validating: true, reason: `${server} sets the AD bit on the signed root` }
        : {
            validating: false,
            reason: `${server} does not set the AD bit on the signed root: it does not validate DNSSEC`,
          };
    },

    async mxSecurity(domain) {
      const mx = await ask(domain, 'MX');
      if (!mx.ok) return 'error';
      const security = securityOf(mx.reply);
      if (security !== 'secure' || hasType(mx.reply, 'MX') || mx.reply.rcode === 'NXDOMAIN') return security;
      const own = await ask(domain, 'A');
      return own.ok ? securityOf(own.reply) : 'error';
    },

    async mxHosts(domain) {
      const mx = await ask(domain, 'MX');
      if (!mx.ok) return null;
      const hosts = mx.reply.answers
        .filter((a) => a.type === 'MX')
        .map((a) => (a.data as { exchange: string }).exchange.toLowerCase().replace(/\.$/, ''));
      return hosts.length ? hosts : [domain.toLowerCase().replace(/\.$/, '')];
    },

    async tlsa(host, port) {
      const address = await ask(host, 'A');
      const expanded = address.ok && address.reply.ad ? lastAlias(address.reply) : undefined;
      if (expanded && expanded.toLowerCase() !== host.toLowerCase()) {
        const first = await tlsaAt(expanded, port);
        // RFC 7671 7: nothing usable at the expanded name (none, or unsigned): the host's own name.
        if (first.state !== 'secure-none' && first.state !== 'insecure') return first;
      }
      return tlsaAt(host, port);
    },
  };

  async function tlsaAt(base: string, port: number): Promise<TlsaAnswer> {
    const asked = await ask(`_${port}._tcp.${base}`, 'TLSA');
    if (!asked.ok) return { state: 'error', reason: asked.reason };
    return tlsaAnswer(asked.reply, base);
  }
}

/** The TLSA answer a reply makes (RFC 7672 2.1.1). */
function tlsaAnswer(reply: Reply, base: string): TlsaAnswer {
  const security = securityOf(reply);
  if (security === 'bogus') return { state: 'bogus', reason: `the resolver answered SERVFAIL for TLSA at ${base}` };
  if (security === 'error')
    return { state: 'error', reason: `the resolver answered ${reply.rcode} for TLSA at ${base}` };
  if (security === 'insecure') return { state: 'insecure' };
  const records = reply.answers.flatMap((a) => (a.type === 'TLSA' ? [toRecord(a.data)] : []));
  return records.length > 0 ? { state: 'secure', records, base } : { state: 'secure-none' };
}

const toRecord = (d: TlsaData): TlsaRecord => ({
  usage: d.usage,
  selector: d.selector,
  matchingType: d.matchingType,
  data: d.certificate,
});

function securityOf(reply: Reply): Security | 'error' {
  if (reply.rcode === 'SERVFAIL') return 'bogus';
  if (reply.rcode !== 'NOERROR' && reply.rcode !== 'NXDOMAIN') return 'error';
  return reply.ad ? 'secure' : 'insecure';
}

const hasType = (reply: Reply, type: string) => reply.answers.some((a) => a.type === type);

/** The name a CNAME chain in the answer ends at, if there is one. */
function lastAlias(reply: Reply): string | undefined {
  const aliases = reply.answers.flatMap((a) => (a.type === 'CNAME' ? [a.data] : []));
  return aliases.at(-1);
}

interface Peer {
  host: string;
  port: number;
  family: 'udp4' | 'udp6';
}

/** `host`, `host:port`, `[v6]:port` or a bare IPv6 address; port 53 by default. */
export function parseServer(server: string): Peer {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
  const [host, port] = bracketed
    ? [bracketed[1]!, bracketed[2]]
    : net.isIPv6(server)
      ? [server, undefined]
      : (server.split(':') as [string, string | undefined]);
  return { host, port: port ? Number(port) : 53, family: net.isIPv6(host) ? 'udp6' : 'udp4' };
}

/** One question: over UDP, and again over TCP if the UDP answer is truncated. */
async function exchange(peer: Peer, name: string, type: string, timeoutMs: number): Promise<Outcome> {
  const id = randomInt(0, 0x10000);
  const query = dnsPacket.encode({
    type: 'query',
    id,
    // RD, and AD in the query: ask for the AD bit in the answer (RFC 6840 5.7).
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.AUTHENTIC_DATA,
    questions: [{ type: type as 'A', name }],
    // EDNS0 with DO: a validating resolver sets AD only for a client that says it understands it.
    additionals: [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: UDP_PAYLOAD,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: dnsPacket.DNSSEC_OK,
        flag_do: true,
        options: [],
      },
    ],
  });
  try {
    let answer = await overUdp(peer, query, timeoutMs);
    if (truncated(answer)) answer = await overTcp(peer, query, timeoutMs);
    return { ok: true, reply: readReply(dnsPacket.decode(answer), id, name) };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}

/** The TC bit, read before decoding: a truncated answer need not decode. */
const truncated = (answer: Buffer) => answer.length > 2 && (answer[2]! & 0x02) !== 0;

/** dns-packet decodes the rcode as a name ("NOERROR", "SERVFAIL") but its types leave it out. */
type Decoded = DecodedPacket & { rcode?: string };

function readReply(packet: Decoded, id: number, name: string): Reply {
  const asked = packet.questions?.[0]?.name ?? '';
  if (packet.id !== id || packet.type !== 'response' || bare(asked) !== bare(name)) {
    throw new Error(`an answer that does not match the question for ${name}`);
  }
  const soa = packet.authorities?.find((a) => a.type === 'SOA');
  const negativeTtl = soa ? Math.min(soa.ttl ?? 0, soa.data.minimum ?? 0) : NEGATIVE_TTL;
  return { rcode: packet.rcode ?? 'NOERROR', ad: packet.flag_ad === true, answers: packet.answers ?? [], negativeTtl };
}

/** A name to compare: no final dot (the root is ""), lower case. */
const bare = (name: string) => name.replace(/\.$/, '').toLowerCase();

type Finish = (error: Error | null, answer?: Buffer) => void;

/** Settles a query's promise once: the first of answer, error or timeout wins, and cleans up. */
function settleOnce(
  resolve: (answer: Buffer) => void,
  reject: (e: Error) => void,
  timeout: { ms: number; message: string },
  cleanup: () => void,
): Finish {
  let done = false;
  const finish: Finish = (error, answer) => {
    if (done) return;
    done = true;
    timer.cancel();
    cleanup();
    if (error) reject(error);
    else resolve(answer!);
  };
  const timer = ioTimeout(() => finish(new Error(timeout.message)), timeout.ms);
  return finish;
}

function overUdp(peer: Peer, query: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(peer.family);
    const message = `no answer from ${peer.host}:${peer.port} in ${timeoutMs} ms`;
    const finish = settleOnce(resolve, reject, { ms: timeoutMs, message }, () => socket.close());
    socket.on('error', (e) => finish(e));
    // A connected socket takes datagrams only from the resolver's address and port; an answer
    // with another id is someone else's (or forged): keep waiting for ours.
    socket.on('message', (answer) => {
      if (answer.length >= 2 && answer.readUInt16BE(0) === query.readUInt16BE(0)) finish(null, answer);
    });
    socket.connect(peer.port, peer.host, () => socket.send(query));
  });
}

function overTcp(peer: Peer, query: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: peer.host, port: peer.port });
    const message = `no answer over TCP from ${peer.host}:${peer.port} in ${timeoutMs} ms`;
    const finish = settleOnce(resolve, reject, { ms: timeoutMs, message }, () => socket.destroy());
    let received = Buffer.alloc(0);
    socket.on('error', (e) => finish(e));
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      const length = received.length >= 2 ? received.readUInt16BE(0) : Infinity;
      if (received.length >= 2 + length) finish(null, received.subarray(2, 2 + length));
    });
    socket.on('end', () => finish(new Error(`${peer.host}:${peer.port} closed the TCP connection before answering`)));
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16BE(query.length);
    socket.write(Buffer.concat([prefix, query]));
  });
}

/** Replies kept until their TTL ends (the smallest of their records'), at most `size` of them. */
function createCache(clock: Clock, size: number) {
  const kept = new Map<string, { reply: Reply; until: number }>();
  return {
    get(key: string): Reply | undefined {
      const entry = kept.get(key);
      if (entry && entry.until > clock.now()) return entry.reply;
      kept.delete(key);
      return undefined;
    },
    set(key: string, reply: Reply) {
      const ttls = reply.answers.map((a) => (a.type === 'OPT' ? 0 : (a.ttl ?? 0)));
      const ttl = Math.min(MAX_TTL, ttls.length > 0 ? Math.min(...ttls) : reply.negativeTtl);
      if (ttl <= 0) return;
      kept.delete(key);
      kept.set(key, { reply, until: clock.now() + ttl * 1000 });
      if (kept.size > size) kept.delete(kept.keys().next().value!);
    },
  };
}
