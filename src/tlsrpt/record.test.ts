import { describe, expect, it } from 'vitest';
import { parseTlsRptRecords } from './record.ts';

describe('parseTlsRptRecords (RFC 8460 section 3)', () => {
  it.each([
    [['v=TLSRPTv1; rua=mailto:r@x.test'], [{ kind: 'mailto', uri: 'mailto:r@x.test', address: 'r@x.test' }], []],
    [
      ['v=TLSRPTv1;rua=https://r.test/a , mailto:tls%2Brpt@x.test?subject=hi'],
      [
        { kind: 'https', uri: 'https://r.test/a', url: 'https://r.test/a' },
        { kind: 'mailto', uri: 'mailto:tls%2Brpt@x.test?subject=hi', address: 'tls+rpt@x.test' },
      ],
      [],
    ],
    [
      ['v=spf1 -all', 'v=TLSRPTv1; rua=http://r.test/,ftp://r.test/,mailto:r@x.test'],
      [{ kind: 'mailto', uri: 'mailto:r@x.test', address: 'r@x.test' }],
      ['http://r.test/', 'ftp://r.test/'],
    ],
  ])('%j: the usable rua, the ignored ones', (txt, rua, ignored) => {
    expect(parseTlsRptRecords(txt)).toEqual({ rua, ignored });
  });

  it.each([
    [[], 'no v=TLSRPTv1 record'],
    [['v=TLSRPTv2; rua=mailto:r@x.test'], 'no v=TLSRPTv1 record'],
    [['v=TLSRPTv1; rua=mailto:a@x.test', 'v=TLSRPTv1; rua=mailto:b@x.test'], '2 v=TLSRPTv1 records'],
    [['v=TLSRPTv1'], 'the record has no rua'],
    [['v=TLSRPTv1; rua=ftp://r.test/'], 'no usable rua'],
    [['v=TLSRPTv1; rua=mailto:not-an-address'], 'no usable rua'],
  ])('%j: no report (%s)', (txt, problem) => {
    const answer = parseTlsRptRecords(txt);
    expect('problem' in answer && answer.problem).toContain(problem);
  });
});
