import type { Logger } from 'pino';

const drop = (): void => {};

/**
 * A logger that drops everything, without loading pino: the default of an app made for an admin
 * command, which logs nothing (pino and its worker-thread stream were a tenth of such a
 * command's start). Every method is a no-op; `child` answers the same logger.
 */
export const silentLogger: Logger = new Proxy({} as Logger, {
  get(_target, key) {
    if (key === 'child') return () => silentLogger;
    if (key === 'level') return 'silent';
    if (key === 'isLevelEnabled') return () => false;
    return drop;
  },
});
