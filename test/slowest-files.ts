import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** How many of a run's files to name, and the fewest files a run has for the list to be worth printing. */
const SHOWN = 10;
const MIN_FILES = 20;

/**
 * Ends a full run with its ten slowest files (issue 27), so a suite that grows slow is seen in
 * every run, CI's included. A file's time is its import, its hooks and its tests.
 */
export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (modules.length < MIN_FILES) return;
    const timed = modules.map((m) => {
      const d = m.diagnostic();
      return {
        ms: d.prepareDuration + d.environmentSetupDuration + d.setupDuration + d.collectDuration + d.duration,
        project: m.project.name,
        file: relative(process.cwd(), m.moduleId),
      };
    });
    timed.sort((a, b) => b.ms - a.ms);
    const width = Math.max(...timed.map((t) => t.project.length));
    const lines = timed
      .slice(0, SHOWN)
      .map((t) => `  ${(t.ms / 1000).toFixed(1).padStart(6)} s  ${t.project.padEnd(width)}  ${t.file}`);
    process.stdout.write(`\n Slowest ${SHOWN} of ${modules.length} files:\n${lines.join('\n')}\n`);
  }
}
