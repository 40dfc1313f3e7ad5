// The labelled corpus of published SMTP replies (issue 29): reading it, its fixed split, and
// the scoring of the classifier against it. Used by src/delivery/classify-corpus.test.ts and by
// `npm run classify:corpus`. Rules of the split and of scoring: docs/decisions.md, "The bounce
// corpus and its split".
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import {
  BOUNCE_CATEGORIES,
  classifyReply,
  replyOfText,
  type BounceCategory,
  type Classification,
} from '../src/delivery/classify.ts';

export interface CorpusRow {
  file: string;
  line: number;
  provider: string;
  family: string;
  language: string;
  reply: string;
  source: string;
  label: {
    category: BounceCategory;
    outcome: 'hard' | 'soft' | 'retry';
    about: string;
    alternatives: BounceCategory[];
    note: string;
  };
}

export type Part = 'tune' | 'held-out';

const DIR = new URL('./fixtures/bounce-corpus/', import.meta.url);
export const CORPUS_FILES = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n'] as const;

const tsv = (name: string) =>
  readFileSync(new URL(name, DIR), 'utf8')
    .replace(/\n$/, '')
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'));

/** Every row of the corpus with its label; throws when a file and its labels disagree. */
export function readCorpus(): CorpusRow[] {
  return CORPUS_FILES.flatMap((file) => readLabelled(file));
}

function readLabelled(file: string): CorpusRow[] {
  const rows = tsv(`${file}.tsv`);
  const labels = new Map(tsv(`${file}.labels.tsv`).map((l) => [Number(l[0]), l]));
  return rows.map(([provider, family, language, reply, source], i): CorpusRow => {
    const line = i + 2;
    const l = labels.get(line);
    if (!l) throw new Error(`${file}.tsv line ${line} has no label`);
    const [, category, outcome, about, alternatives, note] = l;
    return {
      file,
      line,
      provider: provider!,
      family: family!,
      language: language!,
      reply: reply!,
      source: source!,
      label: {
        category: category as BounceCategory,
        outcome: outcome as CorpusRow['label']['outcome'],
        about: about ?? '',
        alternatives: (alternatives ?? '')
          .split(',')
          .map((a) => a.trim())
          .filter((a): a is BounceCategory => (BOUNCE_CATEGORIES as readonly string[]).includes(a)),
        note: note ?? '',
      },
    };
  });
}

/** The samples labelled a second time, by other people (second/s1, s2), whose labels exist so far. */
const SECOND_FILES = ['second/s1', 'second/s2'] as const;

/** A corpus row with its label from a second, independent labeller. */
export interface TwiceLabelled {
  row: CorpusRow;
  second: CorpusRow['label'];
}

/** Each row of the second labellings, beside the corpus row it repeats. */
export function readSecondLabels(): TwiceLabelled[] {
  const corpus = new Map(readCorpus().map((r) => [`${r.file}:${r.line}`, r]));
  return SECOND_FILES.filter((f) => existsSync(new URL(`${f}.labels.tsv`, DIR))).flatMap((f) => {
    const origin = new Map(tsv(`${f}.origin.tsv`).map(([line, file, at]) => [Number(line), `${file}:${at}`]));
    return readLabelled(f).map((second) => {
      const row = corpus.get(origin.get(second.line)!);
      if (!row || row.reply !== second.reply)
        throw new Error(`${f}.tsv line ${second.line} is not the corpus row it names`);
      return { row, second: second.label };
    });
  });
}

/** The part a row belongs to, fixed by its text alone: held out when SHA-256(reply)[0] < 0x55. */
export function partOf(reply: string): Part {
  return createHash('sha256').update(reply, 'utf8').digest()[0]! < 0x55 ? 'held-out' : 'tune';
}

/** The classifier on a published reply, read as svc reads a reply known only as text (replyOfText). */
export function classifyPublished(reply: string): Classification {
  return classifyReply(replyOfText(reply).reply);
}

/** The lifecycle's reading of a label (design/decisions.md): which outcomes are right. */
export function rightOutcomes(row: CorpusRow): Set<'hard' | 'soft' | 'retry'> {
  const { category, outcome, about } = row.label;
  if (outcome === 'retry' || ['mailbox-full', 'greylisting', 'rate-limited'].includes(category)) {
    return new Set(['retry']);
  }
  if (outcome === 'hard') return new Set(['hard']);
  // A recipient domain that does not exist is a dead address to the lifecycle, not to the category list.
  if (category === 'dns-mx-failure' && about === 'recipient') return new Set(['hard', 'soft']);
  return new Set([outcome]);
}

export interface Scored {
  row: CorpusRow;
  got: Classification;
  category: boolean;
  strictCategory: boolean;
  outcome: boolean;
  wrongfulSuppression: boolean;
  missedHard: boolean;
}

export function score(row: CorpusRow): Scored {
  const got = classifyPublished(row.reply);
  const right = rightOutcomes(row);
  const outcome = got.outcome === 'delivered' ? 'soft' : got.outcome;
  return {
    row,
    got,
    strictCategory: got.category === row.label.category,
    category: got.category === row.label.category || row.label.alternatives.includes(got.category!),
    outcome: right.has(outcome) || (row.label.alternatives.includes(got.category!) && !got.suppress),
    wrongfulSuppression: got.suppress && !right.has('hard'),
    // Suppression is judged strictly (the worst mistake); a labelled alternative the classifier
    // chose that is not a dead address (an ambiguous row) is no missed hard bounce.
    missedHard:
      !got.suppress && right.has('hard') && !right.has('soft') && !row.label.alternatives.includes(got.category!),
  };
}

export interface Figures {
  rows: number;
  category: number;
  strictCategory: number;
  outcome: number;
  wrongfulSuppressions: number;
  missedHard: number;
  /** Per labelled category: rows, right category, right outcome. */
  perCategory: Record<string, { rows: number; category: number; outcome: number }>;
}

export function figures(scored: Scored[]): Figures {
  const perCategory: Figures['perCategory'] = {};
  for (const s of scored) {
    const c = (perCategory[s.row.label.category] ??= { rows: 0, category: 0, outcome: 0 });
    c.rows++;
    if (s.category) c.category++;
    if (s.outcome) c.outcome++;
  }
  const count = (f: (s: Scored) => boolean) => scored.filter(f).length;
  return {
    rows: scored.length,
    category: count((s) => s.category),
    strictCategory: count((s) => s.strictCategory),
    outcome: count((s) => s.outcome),
    wrongfulSuppressions: count((s) => s.wrongfulSuppression),
    missedHard: count((s) => s.missedHard),
    perCategory,
  };
}

export interface Agreement {
  rows: number;
  /** The same category, or one labeller's among the other's alternatives. */
  category: number;
  strictCategory: number;
  /** Outcomes the lifecycle would accept from both labels. */
  outcome: number;
  /** One labeller says the address is dead (hard), the other does not. */
  hardDisagreements: number;
}

/** How often two labellers agree on the same rows: the ceiling for any classifier scored against one of them. */
export function agreement(pairs: TwiceLabelled[]): Agreement {
  const of = (row: CorpusRow, label: CorpusRow['label']): CorpusRow => ({ ...row, label });
  const count = (f: (p: TwiceLabelled) => boolean) => pairs.filter(f).length;
  return {
    rows: pairs.length,
    category: count(
      ({ row: { label: a }, second: b }) =>
        a.category === b.category || a.alternatives.includes(b.category) || b.alternatives.includes(a.category),
    ),
    strictCategory: count(({ row, second }) => row.label.category === second.category),
    outcome: count(({ row, second }) => {
      const b = rightOutcomes(of(row, second));
      return [...rightOutcomes(row)].some((o) => b.has(o));
    }),
    hardDisagreements: count(({ row, second }) => {
      const hardOnly = (r: CorpusRow) => {
        const o = rightOutcomes(r);
        return o.has('hard') && !o.has('soft');
      };
      const canBeHard = (r: CorpusRow) => rightOutcomes(r).has('hard');
      const b = of(row, second);
      return (hardOnly(row) && !canBeHard(b)) || (hardOnly(b) && !canBeHard(row));
    }),
  };
}
