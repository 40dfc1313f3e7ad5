import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { sendRequestSchema } from '../emails/index.ts';
import { requestHash } from '../idempotency/index.ts';
import { LIMITS } from '../limits/index.ts';
import { fieldErrors } from '../validation.ts';

/** A line of the file that passed the check: the request and the Idempotency-Key it is sent with. */
export interface BatchLine {
  line: number;
  body: unknown;
  key: string;
}

/** A line refused before anything is sent: its number and why, one line of text. */
export interface RefusedLine {
  line: number;
  message: string;
}

/** The line's own key, taken out of the request before the request is checked. */
const OWN_KEY = 'idempotency_key';

/**
 * The Idempotency-Key of a line: the same on every run of the same file, so a re-run is
 * answered with replays for what was sent and sends only the rest. It hashes the request's
 * `content` hash (canonical JSON: spacing and key order do not matter), which occurrence of that request
 * in the file this is (two identical lines are two emails, and removing or adding other
 * lines shifts no key), and the batch's `namespace` (decisions.md, "svc send --batch").
 */
export function batchLineKey(content: string, occurrence: number, namespace: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([namespace, occurrence, content]))
    .digest('hex');
  return `svc-batch-${digest}`;
}

/**
 * Whose lines the keys are: the file's absolute path, so the same line in two files is two
 * emails, or the `--batch-id`, which stands for the file wherever it is moved or renamed.
 */
export function batchNamespace(file: string, batchId: string | undefined): string {
  return batchId === undefined ? `file:${resolve(file)}` : `id:${batchId}`;
}

/** Takes a line's own `idempotency_key` out of it: the key (or a refusal) and the request left. */
function ownKeyOf(json: unknown): { body: unknown; key?: string; refusal?: string } {
  if (!json || typeof json !== 'object' || Array.isArray(json) || !(OWN_KEY in json)) return { body: json };
  const { [OWN_KEY]: key, ...body } = json as Record<string, unknown>;
  if (typeof key === 'string' && key.length >= 1 && key.length <= LIMITS.idempotencyKeyChars) return { body, key };
  return { body, refusal: `${OWN_KEY}: a string of 1 to ${LIMITS.idempotencyKeyChars} characters` };
}

/** Why a request is refused, one line: each field with its message (an unknown one with its hint). */
function refusalOf(body: unknown): string | undefined {
  const parsed = sendRequestSchema.safeParse(body);
  if (parsed.success) return undefined;
  return fieldErrors(parsed.error, sendRequestSchema)
    .map((f) => `${f.field || '(line)'}: ${f.message}`)
    .join('; ');
}

/**
 * Reads the JSONL file and checks every non-empty line with the schema the
 * server uses: the valid lines with their keys (in the namespace of `batchId`, or of the
 * file's path without one), and each refused one.
 */
export async function readBatchFile(
  file: string,
  batchId: string | undefined,
): Promise<{ valid: BatchLine[]; invalid: RefusedLine[] }> {
  const valid: BatchLine[] = [];
  const invalid: RefusedLine[] = [];
  const seen = new Map<string, number>();
  const namespace = batchNamespace(file, batchId);
  let n = 0;
  for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    n++;
    if (!text.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      invalid.push({ line: n, message: `not JSON: ${(e as Error).message}` });
      continue;
    }
    const { body, key, refusal } = ownKeyOf(json);
    const message = refusal ?? refusalOf(body);
    if (message !== undefined) {
      invalid.push({ line: n, message });
      continue;
    }
    const content = requestHash(body);
    const occurrence = (seen.get(content) ?? 0) + 1;
    seen.set(content, occurrence);
    valid.push({ line: n, body, key: key ?? batchLineKey(content, occurrence, namespace) });
  }
  return { valid, invalid };
}
