/** Edits (insert, delete, replace one character) that turn `a` into `b` (Levenshtein). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_v, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The known name a misspelt `name` most likely meant (case aside, at most two edits and
 * at most one per two of its letters), or undefined: "tag" gives "tags", "Subject" gives "subject".
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const d = editDistance(lower, k.toLowerCase());
    if (d <= 2 && d * 2 <= lower.length && (!best || d < best.d)) best = { name: k, d };
  }
  return best?.name;
}
