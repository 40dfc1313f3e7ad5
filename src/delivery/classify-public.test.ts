import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyReply } from './classify.ts';

// 198 replies as 33 provider families publish them (postmaster pages, smtpfieldmanual,
// Microsoft's NDR reference, the MTAs' own texts; the source of each is in the file),
// labelled by design/decisions.md's "Bounce categories". Where a reply is ambiguous under
// those definitions, the `note` column says which reading svc takes and why.
const FILE = new URL('./fixtures/public-replies.tsv', import.meta.url);
const rows = readFileSync(FILE, 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => {
    const [provider, reply, category, outcome, source, note] = line.split('\t');
    return { provider: provider!, reply: reply!, category: category!, outcome: outcome!, source: source!, note };
  });

function classify(reply: string) {
  const m = /^(\d{3})[ -]?(?:([245]\.\d{1,3}\.\d{1,3}) ?)?/.exec(reply);
  return classifyReply({ code: Number(m?.[1] ?? 0), enhanced: m?.[2] ?? null, text: reply });
}

describe('classifyReply on published replies', () => {
  it.each(rows)('$provider: $reply', ({ reply, category, outcome }) => {
    const r = classify(reply);
    expect({ category: r.category, outcome: r.outcome }).toEqual({ category, outcome });
    // Only a dead address suppresses: no wrongful suppression, no missed hard bounce.
    expect(r.suppress).toBe(outcome === 'hard');
  });

  it('covers every category, 30 provider families or more, each row with its source', () => {
    expect(new Set(rows.map((r) => r.category)).size).toBe(12);
    expect(new Set(rows.map((r) => r.provider.split(/[ (/]/)[0])).size).toBeGreaterThanOrEqual(30);
    for (const r of rows) expect(r.source, r.reply).toMatch(/^https?:\/\//);
  });
});
