import { domainToASCII, domainToUnicode } from 'node:url';
import { z } from 'zod';

/** Longest name DNS can carry (RFC 1035 §2.3.4, without the root dot). */
const MAX_NAME = 253;
const MAX_LABEL = 63;
const LDH = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** Why `label` is not an IDNA-safe LDH label, or undefined when it is. */
function labelProblem(label: string): string | undefined {
  if (label.length === 0) return 'has an empty label';
  if (label.length > MAX_LABEL) return `has a label longer than ${MAX_LABEL} characters`;
  if (!LDH.test(label)) return `has a label "${label}" that is not letters, digits and inner hyphens`;
  if (label.startsWith('xn--')) {
    // An A-label must decode to Unicode and encode back to itself (IDNA2008).
    const unicode = domainToUnicode(label);
    if (unicode === label || domainToASCII(unicode) !== label) return `has an invalid punycode label "${label}"`;
  } else if (label.slice(2, 4) === '--') {
    return `has a label "${label}" with "--" in positions 3-4, reserved for IDNA`;
  }
  return undefined;
}

/** Why `name` (lowercase ASCII) cannot be a sending domain, or undefined when it can. */
export function domainNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_NAME) return `must be at most ${MAX_NAME} characters`;
  const labels = name.split('.');
  if (labels.length < 2) return 'must have at least two labels (example.com)';
  for (const label of labels) {
    const problem = labelProblem(label);
    if (problem) return problem;
  }
  if (/^\d+$/.test(labels.at(-1)!)) return 'must not end in a numeric label (an IP address is not a domain)';
  return undefined;
}

/** A Unicode name becomes its A-label form; ASCII is only lowercased. */
function toAscii(name: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(name)) return name;
  return domainToASCII(name) || name;
}

/** A sending domain: trimmed, lowercased, Unicode turned into punycode, then checked label by label. */
export const domainNameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .transform(toAscii)
  .superRefine((name, ctx) => {
    const problem = domainNameProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', message: `domain ${problem}` });
  });

export const addDomainSchema = z.strictObject({
  name: domainNameSchema,
  organization: z.string().trim().min(1),
  project: z.string().trim().min(1).optional(),
  /** Also sign with an Ed25519 key (RFC 8463), beside RSA, once its record is published. */
  ed25519: z.boolean().optional(),
  /** Also receive mail for the project's routes (issue 34): its records then add an MX at the domain. */
  receiving: z.boolean().optional(),
});

export type AddDomainInput = z.input<typeof addDomainSchema>;
