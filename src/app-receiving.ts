import { publicUrlOf } from './app-options.ts';
import type { Wiring, wireAccess, wireSending } from './app-parts.ts';
import { projectSender, type Sender } from './emails/index.ts';
import { createReceiving, type MessageReaders } from './receiving/index.ts';

/** Attachments up to this size travel inside an `email.received` webhook's body; larger ones by link. */
const INLINE_MAX_BYTES = 256 * 1024;

/**
 * Receiving mail (issue 34): routes, the received messages, and the readers of a message (its
 * view and its authentication results, with mailparser and mailauth), loaded with the first.
 */
export function wireReceiving(
  w: Wiring,
  { accounts }: Pick<ReturnType<typeof wireAccess>, 'accounts'>,
  { emails }: Pick<ReturnType<typeof wireSending>, 'emails'>,
) {
  const { config, clock, logger, store, settings } = w;
  let readers: Promise<MessageReaders> | undefined;
  return createReceiving({
    repo: store.receiving,
    domains: store.domains,
    webhooks: store.webhooks,
    async senderOf(projectId): Promise<Sender> {
      const project = await accounts.getProjectById(projectId);
      return projectSender(project, await accounts.getOrg(project.organization_id));
    },
    forward: (sender, raw, forwarder, to) => emails.forwardRaw(sender, raw, forwarder, to),
    readers: () =>
      (readers ??= import('./receiving/readers.ts').then((m) =>
        m.createReaders({
          hostname: settings.hostname,
          dnsServers: settings.dnsServers,
          inlineMaxBytes: INLINE_MAX_BYTES,
        }),
      )),
    downloadKey: () => store.secrets.get('received-downloads'),
    publicUrl: publicUrlOf(config),
    hostname: settings.hostname,
    clock,
    logger,
    rate: { perIp: config.inboundRatePerIp, perSender: config.inboundRatePerSender },
  });
}
