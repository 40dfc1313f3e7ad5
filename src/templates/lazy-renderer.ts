import type { Renderer, RendererOptions } from './renderer.ts';

/**
 * A Renderer whose pool starts with the first render: its module (piscina) loads then, so
 * an app that renders nothing (an admin command) neither spawns threads nor loads it.
 */
export function createLazyRenderer(opts: RendererOptions): Renderer {
  let pool: Renderer | undefined;
  return {
    async render(input, variables) {
      const { createRenderer } = await import('./renderer.ts');
      // Assigned after the import settles, so renders that came meanwhile share one pool.
      pool ??= createRenderer(opts);
      return pool.render(input, variables);
    },
    close: async () => {
      await pool?.close();
    },
  };
}
