/** The parts of libmime (mailparser's MIME helpers) svc uses: src/emails/raw.ts. */
declare module 'libmime' {
  const libmime: {
    /** RFC 2047 encoded words decoded to a string. */
    decodeWords(value: string): string;
    /** `text/plain; charset=utf-8` as its value and parameters (RFC 2231 continuations joined and decoded). */
    parseHeaderValue(value: string): { value: string; params: Record<string, string> };
  };
  export default libmime;
}
