/** Static limits of the contract ("Limits") in one place; no limit is repeated as a literal. */
export const LIMITS = {
  recipientsPerEmail: 50,
  replyTo: 10,
  tags: 10,
  tagChars: 32,
  /** Metadata of a send (issue 35; decisions.md, "Metadata"): keys, a key's and a value's characters, all of it as JSON. */
  metadataKeys: 20,
  metadataKeyChars: 40,
  metadataValueChars: 500,
  metadataBytes: 4096,
  subjectChars: 998,
  fromNameChars: 200,
  templateSlugChars: 100,
  attachments: 10,
  attachmentBytes: 10 * 1024 * 1024,
  messageBytes: 25 * 1024 * 1024,
  attachmentBase64Chars: 14_348_938,
  attachmentFilenameChars: 255,
  contentTypeChars: 255,
  batchEmails: 100,
  listDefault: 25,
  listMax: 100,
  idempotencyKeyChars: 255,
  /** Not in the contract: a header name/value ceiling and a count, so one request cannot carry megabytes of headers. */
  headerNameChars: 200,
  headerValueChars: 2000,
  headers: 50,
  /** A relayed or raw message's header block (issue 33): Postfix's header_size_limit, for the whole block. */
  rawHeaderBytes: 100 * 1024,
  /** POST /v1/emails/raw's message as base64: 25 MiB, with line breaks every 76 characters. */
  rawBase64Chars: 35_791_396,
  /** Template sources (their syntax check runs on the main thread: 256 KiB keeps it to tens of ms) and rendered output. */
  templateBodyChars: 256 * 1024,
  renderOutputBytes: 5 * 1024 * 1024,
  /** Whole HTTP body: 25 MiB of attachments as base64 plus headroom. */
  httpBodyBytes: 40 * 1024 * 1024,
  /** Idempotent replays are kept this long (decisions.md). */
  idempotencyTtlMs: 24 * 3600 * 1000,
} as const;
