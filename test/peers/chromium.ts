import { existsSync } from 'node:fs';

/**
 * The Chromium the dashboard's browser tests drive (Debian's `chromium`; nothing downloads a
 * browser), or undefined when this machine has none: SVC_CHROMIUM names another.
 */
export function findChromium(): string | undefined {
  const candidates = [process.env.SVC_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((p): p is string => p !== undefined && p !== '' && existsSync(p));
}
