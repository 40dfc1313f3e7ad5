import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { systemClock } from '../lib/clock.ts';
import { createRenderer, type Renderer } from './renderer.ts';

const TIME_LIMIT_MS = 200;
const text = (source: string) => ({ subject: 'S', html: null, text: source });

async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected an AppError');
}

describe('createRenderer', () => {
  let renderer: Renderer;

  beforeAll(async () => {
    renderer = createRenderer({ timeoutMs: TIME_LIMIT_MS, maxOutputBytes: 100_000, maxThreads: 1 });
    // The first render waits for the worker to start (not counted in the time limit).
    await renderer.render(text('warm'), {});
  });

  afterAll(async () => {
    await renderer.close();
  });

  it('renders subject, html and text in a worker', async () => {
    const out = await renderer.render({ subject: 'Hi {{ n }}', html: '<b>{{ n }}</b>', text: '{{ n }}' }, { n: '<A>' });
    expect(out).toEqual({ subject: 'Hi <A>', html: '<b>&lt;A&gt;</b>', text: '<A>' });
  });

  it('rebuilds the AppError of a failed render', async () => {
    const e = await failure(renderer.render({ subject: 'Hi {{ name }}', html: null, text: null }, {}));
    expect(e.code).toBe('template_variable_missing');
    expect(e.details).toEqual({ variable: 'name', field: 'subject' });
  });

  it('keeps the sandbox in the worker', async () => {
    const e = await failure(renderer.render(text('{{ range.constructor("globalThis.__pwned=1")() }}'), {}));
    expect(e.code).toBe('template_render_error');
    const variables = JSON.parse('{"__proto__": {"polluted": 1}, "a": {"__proto__": {"polluted": 1}}}') as object;
    // The key stays plain data: printed, not turned into a prototype.
    const out = await renderer.render(text('{{ a | dump }}'), { ...variables });
    expect(out.text).toBe('{"__proto__":{"polluted":1}}');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it.each([
    ['a runaway loop', '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}'],
    ['infinite recursion', '{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}'],
    ['a slow filter chain', '{% for i in range(100000) %}{{ range(100000) | sort | length }}{% endfor %}'],
  ])('cuts off %s within twice the time limit, without blocking the event loop', async (_name, source) => {
    await renderer.render(text('warm'), {}); // a ready worker, so only the template's time is measured
    let ticks = 0;
    const tick = systemClock.setInterval(() => ticks++, 10);
    const started = performance.now();
    const e = await failure(renderer.render(text(source), {}));
    const elapsed = performance.now() - started;
    tick.cancel();
    expect(e.code).toBe('template_render_error');
    expect(elapsed).toBeLessThan(2 * TIME_LIMIT_MS);
    // Recursion overflows the stack quickly; the loops run into the time limit.
    if (elapsed >= TIME_LIMIT_MS) {
      expect(e.details).toMatchObject({ message: expect.stringContaining('time limit') as unknown });
      expect(ticks).toBeGreaterThanOrEqual(5);
    }
    await expect(renderer.render(text('after {{ n }}'), { n: 1 })).resolves.toMatchObject({ text: 'after 1' });
  });
});

describe('createRenderer memory limit', () => {
  it('turns a worker killed by its heap limit into template_render_error', async () => {
    const renderer = createRenderer({ timeoutMs: 10_000, maxOutputBytes: 100_000, maxThreads: 1 });
    try {
      const hog = '{% set a = [] %}{% for i in range(100000) %}{% set a = [a, range(100000)] %}{% endfor %}';
      const e = await failure(renderer.render(text(hog), {}));
      expect(e.code).toBe('template_render_error');
      expect(e.details).toMatchObject({ message: expect.stringContaining('memory limit') as unknown });
      await expect(renderer.render(text('still {{ n }}'), { n: 'here' })).resolves.toMatchObject({
        text: 'still here',
      });
    } finally {
      await renderer.close();
    }
  });
});
