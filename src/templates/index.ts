export { createTemplatesRepo, type TemplatesRepo } from './repo.ts';
export { createTemplatesService, type TemplatesService } from './service.ts';
export { createRenderer, type Renderer } from './renderer.ts';
export type { Template, CreateTemplateInput, UpdateTemplateInput } from './schema.ts';
