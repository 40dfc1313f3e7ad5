// npm run classify:corpus -- [--part tune|held-out] [--mismatches] | --agreement
// The classifier's figures on the labelled corpus (docs/decisions.md, "The bounce corpus and
// its split"). Mismatches are listed for the tuning part only: the held-out part is never
// looked at row by row.
import { parseArgs } from 'node:util';
import { describeRule } from '../src/delivery/classify.ts';
import {
  agreement,
  figures,
  partOf,
  readCorpus,
  readSecondLabels,
  score,
  type Part,
  type Scored,
} from '../test/bounce-corpus.ts';

const { values } = parseArgs({
  options: {
    part: { type: 'string', default: 'tune' },
    mismatches: { type: 'boolean', default: false },
    agreement: { type: 'boolean', default: false },
  },
});
const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;
if (values.agreement) {
  // The second labellings against the first, and the classifier against each, on the same rows
  // (both parts together: only aggregates are printed).
  const pairs = readSecondLabels();
  const a = agreement(pairs);
  const first = figures(pairs.map((p) => score(p.row)));
  const second = figures(pairs.map((p) => score({ ...p.row, label: p.second })));
  console.log(`rows labelled twice: ${a.rows}`);
  console.log(
    `  labeller against labeller: category ${pct(a.category, a.rows)} (strict ${pct(a.strictCategory, a.rows)}), outcome ${pct(a.outcome, a.rows)}, hard disputed ${a.hardDisagreements}`,
  );
  for (const [who, f] of [
    ['first', first],
    ['second', second],
  ] as const) {
    console.log(
      `  classifier against the ${who}: category ${pct(f.category, f.rows)} (strict ${pct(f.strictCategory, f.rows)}), outcome ${pct(f.outcome, f.rows)}, wrongful ${f.wrongfulSuppressions}, missed hard ${f.missedHard}`,
    );
  }
  process.exit(0);
}
const part = values.part as Part;
if (part !== 'tune' && part !== 'held-out') {
  console.error('error: --part is tune or held-out');
  process.exit(2);
}
const scored = readCorpus()
  .filter((r) => partOf(r.reply) === part)
  .map(score);
const f = figures(scored);
console.log(`part ${part}: ${f.rows} rows`);
console.log(`  category ${f.category}/${f.rows} (${pct(f.category, f.rows)}), strict ${pct(f.strictCategory, f.rows)}`);
console.log(`  outcome  ${f.outcome}/${f.rows} (${pct(f.outcome, f.rows)})`);
console.log(`  wrongful suppressions ${f.wrongfulSuppressions}, missed hard bounces ${f.missedHard}`);
console.log('\n  category              rows  category  outcome');
for (const [c, v] of Object.entries(f.perCategory).sort((a, b) => b[1].rows - a[1].rows)) {
  console.log(
    `  ${c.padEnd(22)}${String(v.rows).padStart(4)}  ${pct(v.category, v.rows).padStart(8)}  ${pct(v.outcome, v.rows).padStart(7)}`,
  );
}
if (values.mismatches && part === 'tune') {
  const wrong = (s: Scored) => !s.category || !s.outcome || s.wrongfulSuppression || s.missedHard;
  for (const s of scored.filter(wrong)) {
    const l = s.row.label;
    console.log(
      `\n${s.row.file}:${s.row.line} ${s.row.reply}\n  label ${l.category}/${l.outcome}${l.alternatives.length ? ` (or ${l.alternatives.join(',')})` : ''} about ${l.about}${l.note ? ` — ${l.note}` : ''}\n  got   ${s.got.category}/${s.got.outcome}${s.got.suppress ? ' SUPPRESS' : ''} by ${describeRule(s.got.rule)}`,
    );
  }
}
