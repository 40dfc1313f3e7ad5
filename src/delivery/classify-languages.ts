// The regexes the rules of classify-rules.ts read the languages besides English with, built
// from the word tables of classify-words.ts. A rule reads a noun and its predicate within one
// clause, in either order ("Empfänger unbekannt", "unbekannter Empfänger", "No existe el
// usuario"), so a new phrasing of a known pair needs no new row. Letters are not ASCII:
// boundaries are written with \p{L} and the scripts' classes, and every regex here has the `u` flag.
import { LANGUAGES, type Words } from './classify-words.ts';

const any = (key: keyof Words): string =>
  LANGUAGES.map((l) => l[key])
    .filter((w): w is string => w !== undefined)
    .map(folded)
    .join('|');

/**
 * A word list that also matches its words written without accents, as replies often are in
 * ASCII ("Le compte du destinataire est bloque", "Boite du destinataire archivee"): each accented
 * Latin letter becomes a class of itself and its base letter.
 */
function folded(words: string): string {
  let inClass = false;
  let out = '';
  for (const c of words) {
    if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    const base = c.normalize('NFD').replace(/\p{M}/gu, '');
    const accented = base !== c && /^[a-z]$/i.test(base);
    out += !accented ? c : inClass ? c + base : `[${c}${base}]`;
  }
  return out;
}

/**
 * Within one clause: no sentence end or clause mark between a noun and what is said of it (the
 * dot of an address or a domain, followed by a letter, does not end a sentence).
 */
const SAME_CLAUSE = '(?:[^.;:,!?。！？，、\\n]|[.:](?=[\\p{L}\\p{N}])){0,40}?';
/** Scripts that separate words with spaces; in the others (CJK, Thai) a word may start anywhere. */
const SPACED = '\\p{Script=Latin}\\p{Script=Cyrillic}\\p{Script=Greek}';
/** A word begins where no letter of a spaced script stands before it. */
const START = `(?<![${SPACED}\\p{N}])`;
/** A word ends after at most a short inflection (Russian "получател|ь", Swedish "adress|en"). */
const END = `[${SPACED}]{0,3}(?![${SPACED}])`;

/** A noun and what is said of it, in either order, within one clause. */
function pair(noun: string, said: string): RegExp {
  return new RegExp(pairSource(noun, said), 'iu');
}

function pairSource(noun: string, said: string): string {
  return `${START}(?:${noun})${END}${SAME_CLAUSE}(?:${said})|${START}(?:${said})${END}${SAME_CLAUSE}(?:${noun})${END}`;
}

/**
 * In each language, its recipient nouns and what it says of them (a noun of one language with
 * a predicate of another means nothing: English "address" is not Spanish "inválida"). The
 * recipient is not after "your" (the reader is our sender) and is not an IP address
 * ("IP-Adresse", "adresse IP").
 */
function recipientPairs(key: 'dead' | 'disabled' | 'invalid'): RegExp {
  const languages = LANGUAGES.filter((l) => l.recipient !== undefined && l[key] !== undefined);
  const sources = languages.map((l) => {
    const yours = l.yours === undefined ? '' : `${START}(?:${folded(l.yours)})\\s+(?:[\\p{L}\\p{N}-]+?[\\s-]+)?|`;
    const noun = `(?<!${yours}IP[\\s-]?)(?:${folded(l.recipient!)})(?!${END}[\\s-]*IP(?!\\p{L}))`;
    return pairSource(noun, folded(l[key]!));
  });
  const words = (k: 'recipient' | 'dead' | 'disabled' | 'invalid') => languages.map((l) => folded(l[k]!)).join('|');
  return new Gated(sources.join('|'), [new RegExp(words('recipient'), 'iu'), new RegExp(words(key), 'iu')]);
}

/**
 * A regex tried only when each of its gates matches somewhere in the text: the pairs of 20-odd
 * languages, each with its look-behinds, cost a millisecond a reply; the plain word lists that
 * gate them, a few microseconds, and most replies hold no pair. (RegExp.prototype.test calls exec.)
 */
class Gated extends RegExp {
  readonly #gates: readonly RegExp[];

  constructor(source: string, gates: readonly RegExp[]) {
    super(source, 'iu');
    this.#gates = gates;
  }

  override exec(text: string): RegExpExecArray | null {
    return this.#gates.every((g) => g.test(text)) ? super.exec(text) : null;
  }
}

/** The recipient said not to exist. */
export const DEAD_RECIPIENT = recipientPairs('dead');
/** The recipient said to be unavailable, disabled or blocked by its provider. */
export const DISABLED_RECIPIENT = recipientPairs('disabled');
/** The recipient's address said to be invalid: the recipient is refused, but maybe for its syntax. */
export const INVALID_RECIPIENT = recipientPairs('invalid');
/** A mailbox said to be full. */
export const FULL_MAILBOX = pair(any('mailbox'), any('full'));
/** A message or its size said to be too large (the words are specific enough alone). */
export const TOO_LARGE = new RegExp(`${START}(?:${any('tooLarge')})`, 'iu');
/** Too many of something. */
export const TOO_MANY = new RegExp(`${START}(?:${any('tooMany')})`, 'iu');
/** Our IP said to be blocked, or a block list named. */
export const IP_BLOCKED = new RegExp(
  `${pair('IP(?![\\p{Script=Latin}])', any('blocked')).source}|${START}(?:${any('blockList')})`,
  'iu',
);
/** Spam, unwanted mail, a virus. */
export const SPAM_WORDS = new RegExp(`${START}(?:${any('spam')})`, 'iu');
/** Greylisting. */
export const GREY_LIST = new RegExp(`${START}(?:${any('greyList')})`, 'iu');
/** May, might, perhaps, in English and the languages above. */
export const HEDGE = new RegExp(`\\b(?:may|might|possibly|perhaps|probably)\\b|${START}(?:${any('hedge')})`, 'iu');
/** A policy, a rule or a permission named: a refusal by the receiver's rules. */
export const POLICY_WORDS = new RegExp(`${START}(?:${any('policy')}|${any('permission')})`, 'iu');
/** Later, temporary, delayed. */
export const LATER = new RegExp(`${START}(?:${any('later')})`, 'iu');
