import { describe, expect, it } from 'vitest';
import type { AppError } from '../errors.ts';
import { normalizeLineEnds, readHeaderBlock, readStructure } from './raw.ts';

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'));
const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as AppError).code;
  }
  return 'none';
};

describe('normalizeLineEnds', () => {
  it('returns a CRLF message as the same bytes', () => {
    const raw = Buffer.from('A: b\r\n\r\nbody\r\n');
    expect(normalizeLineEnds(raw)).toBe(raw);
  });

  it('makes a bare LF and a bare CR each one CRLF, and leaves CRLF alone', () => {
    expect(normalizeLineEnds(Buffer.from('a\nb\rc\r\nd\n\ne')).toString()).toBe('a\r\nb\r\nc\r\nd\r\n\r\ne');
  });
});

describe('readHeaderBlock', () => {
  it('gives each field its byte range and its unfolded value, in order, repeats kept', () => {
    const raw = crlf(['Subject: one', ' two', 'To: a@x.test', 'to: b@x.test', '', 'body']);
    const block = readHeaderBlock(raw);
    expect(block.fields.map((f) => [f.name, f.key, f.value])).toEqual([
      ['Subject', 'subject', 'one two'],
      ['To', 'to', 'a@x.test'],
      ['to', 'to', 'b@x.test'],
    ]);
    expect(raw.subarray(block.fields[0]!.start, block.fields[0]!.end).toString()).toBe('Subject: one\r\n two\r\n');
    expect(raw.subarray(block.bodyStart).toString()).toBe('body');
    expect(raw.subarray(block.end, block.bodyStart).toString()).toBe('\r\n');
  });

  it('reads a message with no body as all header block', () => {
    const raw = Buffer.from('From: a@x.test\r\nSubject: s');
    const block = readHeaderBlock(raw);
    expect(block.fields.map((f) => f.value)).toEqual(['a@x.test', 's']);
    expect([block.end, block.bodyStart]).toEqual([raw.length, raw.length]);
  });

  it('reads UTF-8 in a value (RFC 6532)', () => {
    expect(readHeaderBlock(Buffer.from('Subject: Grüße 東京\r\n\r\n')).fields[0]!.value).toBe('Grüße 東京');
  });

  it('refuses a line that is not a field, a continuation with nothing before it, and a block over 100 KiB', () => {
    expect(codeOf(() => readHeaderBlock(crlf(['From: a@x.test', 'no colon here', '', 'x'])))).toBe('invalid_request');
    expect(codeOf(() => readHeaderBlock(crlf([' leading: space', '', 'x'])))).toBe('invalid_request');
    expect(codeOf(() => readHeaderBlock(crlf(['Bad Name: x', '', 'x'])))).toBe('invalid_request');
    expect(codeOf(() => readHeaderBlock(crlf([`X: ${'a'.repeat(102_400)}`, '', 'x'])))).toBe('message_too_large');
    expect(codeOf(() => readHeaderBlock(crlf([`X: ${'a'.repeat(102_000)}`, '', 'x'])))).toBe('none');
  });
});

describe('readStructure', () => {
  const part = (headers: string[], body: string) => [...headers, '', body].join('\r\n');
  const multipart = (type: string, boundary: string, parts: string[], preamble = '') =>
    [
      `Content-Type: multipart/${type}; boundary="${boundary}"`,
      '',
      ...(preamble ? [preamble] : []),
      ...parts.flatMap((p) => [`--${boundary}`, p]),
      `--${boundary}--`,
      '',
    ].join('\r\n');
  const structure = (message: string) => {
    const raw = Buffer.from(message);
    return readStructure(raw, readHeaderBlock(raw));
  };

  it('counts attachments: a disposition of attachment, a file name, or a type that is not text', () => {
    const message = multipart('mixed', 'b', [
      multipart('alternative', 'c', [
        part(['Content-Type: text/plain'], 'text'),
        part(['Content-Type: text/html'], '<p>html</p>'),
        part(['Content-Type: text/calendar; method=REQUEST'], 'BEGIN:VCALENDAR'),
      ]),
      part(['Content-Type: text/plain', 'Content-Disposition: attachment'], 'notes'),
      part(['Content-Type: text/csv; name="a.csv"'], 'a,b'),
      part(['Content-Type: image/png', 'Content-Transfer-Encoding: base64'], 'iVBORw0KGgo='),
      part(['Content-Type: application/pkcs7-signature; name="smime.p7s"'], 'MIAGCSqG'),
    ]);
    expect(structure(message).attachments).toBe(4);
  });

  it('takes a preamble, transport padding after a delimiter, and a boundary that is the prefix of a line', () => {
    const message = [
      'Content-Type: multipart/mixed; boundary=b',
      '',
      'This is a preamble.',
      '--b  ',
      'Content-Type: application/octet-stream',
      '',
      '--bx is not a delimiter',
      '--b',
      'Content-Type: image/gif',
      '',
      'R0lGOD',
      '--b--',
      'an epilogue',
    ].join('\r\n');
    expect(structure(message).attachments).toBe(2);
  });

  it('counts a multipart without its close delimiter to its end', () => {
    expect(
      structure(
        ['Content-Type: multipart/mixed; boundary=b', '', '--b', 'Content-Type: image/png', '', 'x'].join('\r\n'),
      ).attachments,
    ).toBe(1);
  });

  it('sizes a base64 part by its characters × 3/4 and refuses one over 10 MiB decoded', () => {
    const b64 = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64').replace(/.{76}/g, '$&\r\n');
    const one = (bytes: number) =>
      multipart('mixed', 'b', [
        part(['Content-Type: application/zip', 'Content-Transfer-Encoding: base64'], b64(bytes)),
      ]);
    expect(codeOf(() => structure(one(10 * 1024 * 1024)))).toBe('none');
    expect(codeOf(() => structure(one(10 * 1024 * 1024 + 3)))).toBe('attachment_too_large');
  });

  it('refuses more than 10 attachments, nesting deeper than 20, and more than 500 parts', () => {
    const file = part(['Content-Type: application/octet-stream'], 'x');
    expect(codeOf(() => structure(multipart('mixed', 'b', Array(10).fill(file))))).toBe('none');
    expect(codeOf(() => structure(multipart('mixed', 'b', Array(11).fill(file))))).toBe('request_validation_failed');
    let nested = part(['Content-Type: text/plain'], 'deep');
    for (let i = 0; i < 21; i++) nested = multipart('mixed', `n${i}`, [nested]);
    expect(codeOf(() => structure(nested))).toBe('invalid_request');
    const text = part(['Content-Type: text/plain'], 'x');
    expect(codeOf(() => structure(multipart('mixed', 'b', Array(500).fill(text))))).toBe('invalid_request');
  });

  it('looks for an inner boundary only inside its own part', () => {
    const inner = part(['Content-Type: multipart/mixed; boundary=never'], 'no delimiter here');
    const message = multipart('mixed', 'b', [inner, part(['Content-Type: image/png'], '--never\r\n')]);
    // "--never" in the next part is not a delimiter of the inner multipart, which has none.
    expect(structure(message).attachments).toBe(1);
  });
});
