import { describe, expect, it } from 'vitest';
import { BOUNCE_CATEGORIES } from './classify.ts';
import { figures, partOf, readCorpus, score } from '../../test/bounce-corpus.ts';

// Issue 29: the labelled corpus of published replies (test/fixtures/bounce-corpus, labelled
// independently from the definitions) and its fixed split (docs/decisions.md, "The bounce
// corpus and its split"). `npm run classify:corpus` prints the figures.

const rows = readCorpus();

describe('the bounce corpus', () => {
  it('holds 600 replies or more, from 80 provider families or more, in 6 languages or more, each sourced', () => {
    expect(rows.length).toBeGreaterThanOrEqual(600);
    const families = new Set(
      rows.map((r) => r.family.toLowerCase()).filter((f) => !/^un(?:attributed|identified)$/.test(f)),
    );
    expect(families.size).toBeGreaterThanOrEqual(80);
    expect(new Set(rows.map((r) => r.language)).size).toBeGreaterThanOrEqual(6);
    for (const r of rows) expect(r.source, `${r.file}:${r.line}`).toMatch(/^(?:https?:\/\/|[\w.-]+\/[\w.-]+:\S+)/);
  });

  it('has one label per reply, each a category of the definitions, alternatives only where given', () => {
    for (const r of rows) {
      expect(BOUNCE_CATEGORIES, `${r.file}:${r.line}`).toContain(r.label.category);
      expect(['hard', 'soft', 'retry'], `${r.file}:${r.line}`).toContain(r.label.outcome);
      expect(r.label.alternatives).not.toContain(r.label.category);
    }
    expect(new Set(rows.map((r) => `${r.file}:${r.reply}`)).size).toBe(rows.length);
  });

  it('keeps its split: about a third held out, decided by the reply text alone', () => {
    const held = rows.filter((r) => partOf(r.reply) === 'held-out').length;
    expect(held / rows.length).toBeGreaterThan(0.28);
    expect(held / rows.length).toBeLessThan(0.39);
  });

  it('suppresses no reply the labellers read as about our sender (tuning part)', () => {
    const sender = rows.filter((r) => partOf(r.reply) === 'tune' && r.label.about === 'sender').map(score);
    expect(sender.length).toBeGreaterThan(40);
    expect(sender.filter((s) => s.got.suppress).map((s) => s.row.reply)).toEqual([]);
  });

  // The figures on the held-out part as published in docs/decisions.md; they may only improve.
  // The targets (category 95 %, outcome 98 %, no wrongful suppression, no missed hard
  // bounce) are not met: docs/decisions.md, "The classifier's learning curve", says why.
  it('does no worse on the held-out part than the published figures', () => {
    const f = figures(rows.filter((r) => partOf(r.reply) === 'held-out').map(score));
    expect(f.rows).toBe(910);
    expect(f.category).toBeGreaterThanOrEqual(762); // 83.7 %
    expect(f.outcome).toBeGreaterThanOrEqual(874); // 96.0 %
    expect(f.wrongfulSuppressions).toBeLessThanOrEqual(6);
    expect(f.missedHard).toBeLessThanOrEqual(21);
  });
});
