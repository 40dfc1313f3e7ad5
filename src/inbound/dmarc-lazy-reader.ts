import type { ReportReader, ReportReaderOptions } from './dmarc-reader.ts';

/**
 * A ReportReader whose pool starts with the first report: piscina and the worker's libraries
 * (mailparser, fflate, fast-xml-parser) load then, so `svc serve` starts and admin commands
 * run without them, as the render pool does (templates/lazy-renderer.ts).
 */
export function createLazyReportReader(opts: ReportReaderOptions = {}): ReportReader {
  let pool: ReportReader | undefined;
  return {
    async read(raw) {
      const { createReportReader } = await import('./dmarc-reader.ts');
      // Assigned after the import settles, so reports that came meanwhile share one pool.
      pool ??= createReportReader(opts);
      return pool.read(raw);
    },
    close: async () => {
      await pool?.close();
    },
  };
}
