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

// The unsubscribe page runs no script and loads nothing; its one form posts back to itself.
const PAGE_CSP = "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const page = (title: string, body: string) =>
  `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<meta name="referrer" content="no-referrer"><title>${title}</title></head><body>\n${body}\n</body></html>\n`;

/**
 * The one-click unsubscribe (RFC 8058) as a mailbox provider sends it: a form-encoded POST,
 * answered 200 with nothing to click; a second one is answered the same.
 */
export const unsubscribe: Handler = async (req, reply, { app }) => {
  await app.tracking.unsubscribe(tokenOf(req));
  return reply.code(200).header('Cache-Control', NO_STORE).type('text/plain; charset=utf-8').send('Unsubscribed.\n');
};

/**
 * A plain page for a person who opens the link: it only asks (a link scanner's GET must not
 * unsubscribe anyone), and its button sends the same POST a mailbox provider would.
 */
export const unsubscribePage: Handler = async (req, reply, { app }) => {
  reply.code(200).header('Cache-Control', NO_STORE).header('Content-Security-Policy', PAGE_CSP);
  reply.type('text/html; charset=utf-8');
  try {
    const t = await app.tracking.unsubscribeTarget(tokenOf(req));
    return reply.send(
      page(
        'Unsubscribe',
        `<p>Stop sending email to ${escapeHtml(t.recipient)}?</p>\n` +
          // No action: the form posts to the page's own URL, whatever prefix a proxy adds.
          `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">` +
          `<button type="submit">Unsubscribe</button></form>`,
      ),
    );
  } catch (e) {
    if (!isAppError(e) || e.code !== 'not_found') throw e;
    return reply.code(404).send(page('Not found', '<p>This unsubscribe link is not valid.</p>'));
  }
};
