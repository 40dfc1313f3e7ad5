import { describe, expect, it } from 'vitest';
import { downloadToken, readDownloadToken } from './downloads.ts';
import { createRateWindows } from './rate.ts';

const key = Buffer.alloc(32, 7);
const id = '0192f4c1-7c2e-7b3a-9d4e-5f6a7b8c9d0e';

describe('download links', () => {
  it('name the message or one attachment until they expire', () => {
    const t = downloadToken(key, { id, index: 3 }, 1_000);
    expect(readDownloadToken(key, t, 999_000)).toEqual({ id, index: 3 });
    expect(readDownloadToken(key, t, 1_000_000)).toBeUndefined();
    expect(readDownloadToken(key, downloadToken(key, { id, index: null }, 2_000), 0)).toEqual({ id, index: null });
  });

  it('refuse another key, an edited body or MAC, and junk', () => {
    const t = downloadToken(key, { id, index: 0 }, 5_000);
    expect(readDownloadToken(Buffer.alloc(32, 8), t, 0)).toBeUndefined();
    const [body, mac] = t.split('.');
    const other = Buffer.from(`${id}.1.5000`).toString('base64url');
    expect(readDownloadToken(key, `${other}.${mac}`, 0)).toBeUndefined();
    expect(readDownloadToken(key, `${body}.${mac!.slice(0, -2)}AA`, 0)).toBeUndefined();
    for (const junk of ['', '.', 'a.b.c', `${body}`, `${body}.${mac}.x`])
      expect(readDownloadToken(key, junk, 0)).toBeUndefined();
  });
});

describe('rate windows', () => {
  it('take up to the limit in a sliding window, counting only what is committed', () => {
    let now = 0;
    const w = createRateWindows(2, 60_000, () => now);
    expect(w.take('a', false)).toBe(true);
    expect(w.take('a', true)).toBe(true);
    expect(w.take('a', true)).toBe(true);
    expect(w.take('a', false)).toBe(false);
    expect(w.take('b', false)).toBe(true);
    now = 59_999;
    expect(w.take('a', false)).toBe(false);
    now = 60_000;
    expect(w.take('a', false)).toBe(true);
  });

  it('slide over a large limit: old counts expire as time passes, however many there were', () => {
    let now = 0;
    const w = createRateWindows(100_000, 60_000, () => now);
    for (let i = 0; i < 100_000; i++) {
      now = Math.floor(i / 2);
      expect(w.take('ip', true)).toBe(true);
    }
    expect(w.take('ip', false)).toBe(false);
    // At 60,000 ms the first two counts (at 0 ms) have left the window.
    now = 60_000;
    expect(w.take('ip', true)).toBe(true);
    expect(w.take('ip', true)).toBe(true);
    expect(w.take('ip', false)).toBe(false);
    // A minute after the last, every count has expired, and the key is forgotten.
    now = 200_000;
    expect(w.take('ip', false)).toBe(true);
    for (let i = 0; i < 100_000; i++) expect(w.take('ip', true)).toBe(true);
    expect(w.take('ip', false)).toBe(false);
  });
});
