import type { Attachment } from './content.ts';

/** What the API shows of a message passed through as written: its text, its HTML and its attachments. */
export interface RawView {
  html: string | null;
  text: string | null;
  attachments: (Attachment & { size: number })[];
}

/** Keep what the client wrote: no text made from the HTML, no HTML from the text, `cid:` links as they are. */
export const AS_WRITTEN = {
  skipHtmlToText: true,
  skipTextToHtml: true,
  skipImageLinks: true,
  skipTextLinks: true,
  keepCidLinks: true,
};

/**
 * Reads a stored message for the API's view (issue 33, "the API's view comes from the stored
 * message"): parsed with mailparser when it is read, never on the path that accepts it. The
 * views of the email (GET /v1/emails/{id}, its attachments, a resend's check) read the same.
 */
export async function readRawView(raw: Buffer): Promise<RawView> {
  // Loaded with the first view, not at start: mailparser compiles its link finder on import.
  const { simpleParser } = await import('mailparser');
  const mail = await simpleParser(raw, AS_WRITTEN);
  const html = mail.html === false ? null : (mail.html ?? null);
  // With skipHtmlToText, an HTML-only message has an empty text: it had no text part.
  const text = html !== null && !mail.text ? null : (mail.text ?? '');
  return {
    html,
    text,
    // A text part with no file name and no disposition of its own (a text/calendar alternative)
    // is a body, not an attachment, as the accept counts them (raw.ts, readStructure).
    attachments: mail.attachments.filter(isAttachment).map((a, i) => ({
      filename: a.filename ?? `attachment-${i + 1}`,
      content_type: a.contentType,
      content: a.content,
      size: a.content.length,
      content_id: a.cid?.replace(/^<|>$/g, '') ?? null,
    })),
  };
}

function isAttachment(a: { contentType: string; filename?: string | undefined; contentDisposition?: string }): boolean {
  return !/^text\//i.test(a.contentType) || Boolean(a.filename) || Boolean(a.contentDisposition);
}
