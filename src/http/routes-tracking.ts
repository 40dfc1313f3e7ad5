import type { FastifyRequest } from 'fastify';
import { isAppError } from '../errors.ts';
import type { Handler } from './handler.ts';

/** A transparent 1x1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
// Every click and open must reach us; no browser, proxy or mail client may answer from a cache.
const NO_STORE = 'no-store, no-cache, must-revalidate, private';

/**
 * The client as tracking records it. `req.ip` is the socket's address unless
 * the operator turns on fastify's trustProxy (off: X-Forwarded-For is ignored).
 */
function visitorOf(req: FastifyRequest) {
  return { ip: req.ip || null, user_agent: req.headers['user-agent'] ?? null };
}

// Token routes are wildcards: a click token carries its URL and can exceed the router's parameter limit.
const tokenOf = (req: FastifyRequest) => (req.params as { '*': string })['*'];

/*
 * Click and open tracking, unauthenticated: the signed token is the credential.
 * HEAD (link scanners, prefetchers) answers like GET but records nothing.
 */

export const trackClick: Handler = async (req, reply, { app }) => {
  const url = await app.tracking.click(tokenOf(req), visitorOf(req), { record: req.method !== 'HEAD' });
  return reply.code(302).header('Location', url).header('Cache-Control', NO_STORE).send();
};

// A pixel is always answered with the image, so a mail client never shows a broken
// one; only a token this server signed, for an email that exists, records `opened`.
export const trackOpen: Handler = async (req, reply, { app }) => {
  try {
    await app.tracking.open(tokenOf(req), visitorOf(req), { record: req.method !== 'HEAD' });
  } catch (e) {
    if (!isAppError(e) || e.code !== 'not_found') throw e;
  }
  return reply.code(200).header('Content-Type', 'image/gif').header('Cache-Control', NO_STORE).send(PIXEL);
};
