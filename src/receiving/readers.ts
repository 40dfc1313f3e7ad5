// The readers of a received message, loaded with the first one: mailparser for its view
// (view.ts), mailauth for its authentication results (auth.ts).
import { authenticateMessage, resolverFor } from './auth.ts';
import type { MessageReaders } from './service.ts';
import { attachmentOf, readReceived } from './view.ts';

export function createReaders(o: {
  hostname: string;
  dnsServers: string[] | undefined;
  inlineMaxBytes: number;
}): MessageReaders {
  const resolver = resolverFor(o.dnsServers);
  return {
    view: async (raw, urls) => ({
      ...(await readReceived(raw, { inlineMaxBytes: o.inlineMaxBytes, attachmentUrl: urls.attachment })),
    }),
    authenticate: async (raw, e) => ({
      ...(await authenticateMessage(
        raw,
        // An IPv4 client on a dual-stack socket is written ::ffff:a.b.c.d; SPF wants a.b.c.d.
        { ip: (e.remoteIp ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.)/, ''), helo: e.helo ?? '', mailFrom: e.mailFrom },
        { hostname: o.hostname, resolver },
      )),
    }),
    attachment: attachmentOf,
  };
}
