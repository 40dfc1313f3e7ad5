import { readFileSync } from 'node:fs';
import { AppError } from '../errors.ts';
import { returnPathsIn } from '../delivery/index.ts';
import { withApp, type GlobalOptions } from './context.ts';
import { count, print } from './io.ts';
import type { ReportReceipt } from '../inbound/index.ts';

type Opts = Record<string, unknown> & GlobalOptions;

/** svc inbound process FILE.eml: feeds a saved bounce to the inbound processor, as if it had arrived by SMTP. */
export async function processFile([file]: string[], opts: Opts): Promise<void> {
  let raw: Buffer;
  try {
    raw = readFileSync(file!);
  } catch (e) {
    throw new AppError('invalid_request', `cannot read ${file}: ${(e as Error).message}`);
  }
  const given = typeof opts.to === 'string' ? [opts.to] : [];
  // Its To, or the Return-Path of the original it quotes.
  const to = given.length ? given : returnPathsIn(raw.toString('latin1'));
  if (!to.length) {
    throw new AppError(
      'invalid_request',
      `no return path of svc in ${file}; give the address it was sent to with --to`,
    );
  }
  const result = await withApp(opts, (app) => app.inbound.process(raw, to));
  print(opts, result, () =>
    [
      `${file}: ${result.kind}`,
      ...result.applied.map(
        (a) =>
          `  applied: ${a.recipient} of ${a.email_id} ${a.status} ` +
          (a.status === 'BOUNCED' ? `${a.bounce_type} ${a.bounce_category}` : a.feedback_type),
      ),
      ...result.ignored.map((i) => `  ignored: ${i.recipient ?? '-'}: ${i.why}`),
      ...(result.report ? reportLines(result.report) : []),
    ].join('\n'),
  );
}

/** What a DMARC aggregate report fed to `svc inbound process --to dmarc@bounces.<domain>` did. */
function reportLines(r: ReportReceipt): string[] {
  return [
    `  DMARC report ${r.report_id} from ${r.org_name} for ${r.domain}: ${count(r.rows, 'row')}, ${r.recorded ? 'recorded' : 'already recorded'}`,
    ...(r.signing ? [`  DKIM signing ${r.signing.status} for ${count(r.signing.emails, 'email')}`] : []),
    ...r.flagged.map(
      (f) => `  flagged: ${f.source_ip} (${count(f.count, 'message')}) is not this server and failed DMARC`,
    ),
  ];
}
