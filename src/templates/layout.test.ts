import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { checkLayoutSlots, emptyLayout, wrapInLayout } from './layout.ts';
import { renderTemplateSync, type TemplateSources } from './sandbox.ts';

const LIMIT = { maxOutputBytes: 100_000 };
const render = (s: TemplateSources, v: Record<string, unknown> = {}) => renderTemplateSync(s, v, LIMIT);

describe('checkLayoutSlots', () => {
  it('takes exactly one {{ content }} in each body present', () => {
    expect(() => checkLayoutSlots({ html_template: '<b>{{ content }}</b>', text_template: null })).not.toThrow();
    expect(() => checkLayoutSlots({ html_template: null, text_template: '{{content}}' })).not.toThrow();
  });

  it.each([
    ['html_template', { html_template: '<b>none</b>', text_template: null }],
    ['html_template', { html_template: '{{ content }}{{ content }}', text_template: '{{ content }}' }],
    ['text_template', { html_template: '{{ content }}', text_template: 'none' }],
  ])('refuses a slot count other than one, naming %s', (field, t) => {
    let e: unknown;
    try {
      checkLayoutSlots(t);
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(AppError);
    expect(e).toMatchObject({ code: 'request_validation_failed', details: { fields: [{ field }] } });
  });
});

describe('wrapInLayout, rendered in the sandbox', () => {
  const layout = {
    html_template: '<main>{{ content }}</main><p>{{ who }}</p>',
    text_template: '[{{ content }}] {{ who }}',
  };

  it('renders the child once, escaped once, inside the layout, with the same variables', () => {
    const child = { subject: 'Hi {{ who }}', html: '<i>{{ who }}</i>', text: 'hey {{ who }}' };
    expect(render(wrapInLayout(child, layout), { who: '<A&B>' })).toEqual({
      subject: 'Hi <A&B>',
      html: '<main><i>&lt;A&amp;B&gt;</i></main><p>&lt;A&amp;B&gt;</p>',
      text: '[hey <A&B>] <A&B>',
    });
  });

  it('leaves a body the layout lacks as the child has it, and a body the child lacks absent', () => {
    const child = { subject: 'S', html: null, text: 'plain' };
    expect(render(wrapInLayout(child, { html_template: '{{ content }}', text_template: null }))).toEqual({
      subject: 'S',
      html: null,
      text: 'plain',
    });
  });

  it('a variable the child uses, not given, is template_variable_missing', () => {
    const child = { subject: 'S', html: 'a\n{{ missing.x }}', text: null };
    let e: unknown;
    try {
      render(wrapInLayout(child, layout), { who: 'w' });
    } catch (err) {
      e = err;
    }
    expect(e).toMatchObject({ code: 'template_variable_missing', details: { variable: 'missing' } });
  });

  it('renders a layout on its own with its slot empty', () => {
    const own = { subject: 'L', html: layout.html_template, text: null };
    expect(render(emptyLayout(own), { who: 'w' })).toEqual({ subject: 'L', html: '<main></main><p>w</p>', text: null });
  });
});
