// Loaded in the report reader's worker only (dmarc-worker.ts): mailparser, fflate and
// fast-xml-parser load there, with the worker, and never on the main thread.
import { simpleParser, type ParsedMail } from 'mailparser';
import { parseReportBytes, type Parsed } from './dmarc-parse.ts';
import { UnpackError, unpackReport, type ReportEncoding } from './dmarc-unpack.ts';

type Attachment = ParsedMail['attachments'][number];

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
const ZIP_MAGIC = Buffer.from('PK\x03\x04', 'latin1');

/**
 * How a report attachment is packed (RFC 7489 §7.2.1.1: gzip or zip, or plain XML), by its
 * first bytes, else its media type or file name; undefined when it is none of them.
 */
function encodingOf(a: Attachment): ReportEncoding | undefined {
  if (a.content.subarray(0, 2).equals(GZIP_MAGIC)) return 'gzip';
  if (a.content.subarray(0, 4).equals(ZIP_MAGIC)) return 'zip';
  const type = a.contentType.toLowerCase();
  const name = (a.filename ?? '').toLowerCase();
  if (/(?:^|\/)(?:x-)?gzip$/.test(type) || name.endsWith('.gz')) return 'gzip';
  if (/zip(?:-compressed)?$/.test(type) || name.endsWith('.zip')) return 'zip';
  if (/[/+]xml$/.test(type) || name.endsWith('.xml')) return 'xml';
  return undefined;
}

/**
 * The aggregate report a message to a report address carries: its attachment found,
 * unpacked within the caps and parsed. Never throws for a bad message: the reason is the answer.
 */
export async function readAggregateReport(raw: Buffer): Promise<Parsed> {
  let mail: ParsedMail;
  try {
    mail = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  } catch {
    return { ok: false, reason: 'the message is not parseable as MIME' };
  }
  const found = mail.attachments
    .map((a) => ({ a, encoding: encodingOf(a) }))
    .find((x): x is { a: Attachment; encoding: ReportEncoding } => x.encoding !== undefined);
  if (!found) return { ok: false, reason: 'no report attached (application/gzip, application/zip or XML)' };
  let xml: Buffer;
  try {
    xml = await unpackReport(found.a.content, found.encoding);
  } catch (e) {
    if (e instanceof UnpackError) return { ok: false, reason: e.message };
    throw e;
  }
  return parseReportBytes(xml);
}
