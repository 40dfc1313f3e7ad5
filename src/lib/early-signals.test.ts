import { afterEach, describe, expect, it } from 'vitest';
import { holdEarlySignals, takeEarlySignal } from './early-signals.ts';

// Signals are emitted as events here (process.emit), never sent: the test runner lives on.
describe('early signals', () => {
  afterEach(() => void takeEarlySignal());

  it('keeps the first SIGTERM or SIGINT that comes while held, and stops holding when taken', () => {
    const before = process.listenerCount('SIGTERM');
    const beforeInt = process.listenerCount('SIGINT');
    holdEarlySignals();
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    process.emit('SIGTERM', 'SIGTERM');
    process.emit('SIGINT', 'SIGINT');
    expect(takeEarlySignal()).toBe('SIGTERM');
    expect(process.listenerCount('SIGTERM')).toBe(before);
    expect(process.listenerCount('SIGINT')).toBe(beforeInt);
    expect(takeEarlySignal()).toBeUndefined();
  });
});
