import { Parser } from 'htmlparser2';
import { TRACKING_LIMITS } from './schema.ts';

/** A link carrying this attribute (any value) is never rewritten: the customer's opt-out per link. */
export const NO_TRACK_ATTRIBUTE = 'data-svc-no-track';

export interface RewriteOptions {
  /** The tracked URL standing in for `url` (an http or https link); undefined leaves the link alone. */
  trackLink?: ((url: string) => string | undefined) | undefined;
  /** The open pixel's URL; without it no pixel is added. */
  pixelUrl?: string | undefined;
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * Rewrites the `href` of every trackable `<a>` and adds the open pixel at the
 * end of the body. The document is tokenized by htmlparser2 (entities decoded
 * as a browser would, script/style/comments skipped), and only the `href`
 * attributes are spliced: every other byte stays as the customer wrote it.
 */
export function rewriteHtml(html: string, opts: RewriteOptions): string {
  const { trackLink, pixelUrl } = opts;
  if (!trackLink && pixelUrl === undefined) return html;
  const edits: Edit[] = [];
  let href: { start: number; end: number; value: string } | undefined;
  let optOut = false;
  let bodyEnd: number | undefined;
  let htmlEnd: number | undefined;
  const parser = new Parser(
    {
      onopentagname() {
        href = undefined;
        optOut = false;
      },
      onattribute(name, value) {
        // The first href wins, as in browsers; startIndex/endIndex span the whole attribute.
        if (name === 'href') href ??= { start: parser.startIndex, end: parser.endIndex, value };
        else if (name === NO_TRACK_ATTRIBUTE) optOut = true;
      },
      onopentag(name) {
        if (name !== 'a' || !href || optOut || !trackLink) return;
        const url = trackableUrl(href.value);
        const tracked = url === undefined ? undefined : trackLink(url);
        if (tracked === undefined) return;
        edits.push({ start: href.start, end: href.end, text: `href="${escapeAttr(tracked)}"` });
      },
      onclosetag(name, isImplied) {
        // startIndex is where the `</body>` (or `</html>`) tag itself starts.
        if (!isImplied && name === 'body') bodyEnd ??= parser.startIndex;
        if (!isImplied && name === 'html') htmlEnd ??= parser.startIndex;
      },
    },
    { decodeEntities: true },
  );
  parser.parseComplete(html);
  if (pixelUrl !== undefined) {
    const at = bodyEnd ?? htmlEnd ?? html.length;
    edits.push({ start: at, end: at, text: pixelTag(pixelUrl) });
  }
  return splice(html, edits);
}

/** An http(s) URL worth tracking, trimmed as a browser trims it; mailto:, tel:, #anchors and others are not. */
export function trackableUrl(href: string): string | undefined {
  const url = href.trim();
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) return undefined;
  return Buffer.byteLength(url, 'utf8') <= TRACKING_LIMITS.urlBytes ? url : undefined;
}

function pixelTag(src: string): string {
  return `<img src="${escapeAttr(src)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;margin:0;padding:0" />`;
}

function escapeAttr(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function splice(html: string, edits: Edit[]): string {
  if (edits.length === 0) return html;
  edits.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += html.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + html.slice(at);
}
