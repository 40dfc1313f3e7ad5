export { createTemplatesRepo } from './repo.ts';
export type { TemplatesStore } from './store.ts';
export { createTemplatesService, type TemplatesService } from './service.ts';
export { createLazyRenderer } from './lazy-renderer.ts';
export type { Renderer, RendererOptions } from './renderer.ts';
export type { Template, CreateTemplateInput, UpdateTemplateInput } from './schema.ts';
export { slugSchema } from './schema.ts';
export { previewOut, previewTemplateSchema, testSendSchema } from './schema.ts';
export { sendTemplateTest } from './test-send.ts';
