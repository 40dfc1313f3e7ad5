import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { checkTemplateSyntax, renderTemplateSync, type TemplateSources } from './sandbox.ts';

type Field = 'subject' | 'html' | 'text';
const LIMIT = { maxOutputBytes: 100_000 };
const pwned = globalThis as { __pwned?: unknown };

function render(field: Field, source: string, variables: Record<string, unknown> = {}): string | null {
  const input: TemplateSources = { subject: 'S', html: null, text: null };
  input[field] = source;
  return renderTemplateSync(input, variables, LIMIT)[field];
}

function failure(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected an AppError');
}

afterEach(() => {
  expect(pwned.__pwned).toBeUndefined();
  expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
});

describe('renderTemplateSync', () => {
  it.each<[string, Field, string, Record<string, unknown>, string]>([
    ['a variable', 'text', 'Hello {{ name }}', { name: 'Ann' }, 'Hello Ann'],
    ['an attribute', 'text', '{{ user.name }}', { user: { name: 'Ann' } }, 'Ann'],
    ['a loop', 'text', '{% for i in items %}{{ loop.index }}{{ i.n }} {% endfor %}', { items: [{ n: 'a' }] }, '1a '],
    [
      'a macro and a call block',
      'text',
      '{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}x{% endcall %}',
      {},
      '<x>',
    ],
    [
      'cycler and joiner',
      'text',
      '{% set c = cycler(1, 2) %}{% set j = joiner() %}{{ j() }}{{ c.next() }}{{ j() }}{{ c.next() }}',
      {},
      '1,2',
    ],
    ['filters', 'text', '{{ name | upper }} {{ items | join("-") }}', { name: 'a', items: [1, 2] }, 'A 1-2'],
    ['is defined, missing', 'text', '{% if x is defined %}y{% else %}n{% endif %}', {}, 'n'],
    ['is not defined, missing attribute', 'text', '{% if u.x is not defined %}n{% endif %}', { u: {} }, 'n'],
    ['default', 'text', '{{ x | default("d") }}{{ u.name | d("e") }}', {}, 'de'],
    ['tests', 'text', '{{ x is none }} {{ 3 is odd }} {{ 6 is divisibleby(3) }}', { x: null }, 'true true true'],
    ['html escapes variables', 'html', '<p>{{ v }}</p>', { v: '<b>&' }, '<p>&lt;b&gt;&amp;</p>'],
    ['html keeps safe values', 'html', '{{ v | safe }}', { v: '<b>' }, '<b>'],
    ['subject is not escaped', 'subject', '{{ v }}', { v: '<b>' }, '<b>'],
    ['text is not escaped', 'text', '{{ v }}', { v: '<b>' }, '<b>'],
    ['a dict prints plainly', 'text', '{{ v }}', { v: { a: 1 } }, '[object Object]'],
  ])('renders %s', (_name, field, source, variables, expected) => {
    expect(render(field, source, variables)).toBe(expected);
  });

  it.each<[string, string, Record<string, unknown>, string]>([
    ['a variable', 'Hi {{ name }}', {}, 'name'],
    ['the variable of a missing attribute', '{{ user.name }}', {}, 'user'],
    ['a missing attribute by path', '{{ user.name }}', { user: {} }, 'user.name'],
    ['a variable used in a condition', '{% if x %}y{% endif %}', {}, 'x'],
    ['an inherited name', '{{ toString }}', {}, 'toString'],
    ['an inherited method', '{{ x.toString() }}', { x: {} }, 'x.toString'],
  ])('reports %s as template_variable_missing', (_name, source, variables, variable) => {
    const e = failure(() => render('html', source, variables));
    expect(e.code).toBe('template_variable_missing');
    expect(e.details).toEqual({ variable, field: 'html' });
  });

  it.each([
    '{{ range.constructor("globalThis.__pwned=1")() }}',
    '{{ range.constructor("return process")() }}',
    '{{ cycler.constructor("globalThis.__pwned=1")() }}',
    '{{ joiner.constructor }}',
    '{{ "".constructor.constructor("globalThis.__pwned=1")() }}',
    '{{ x["constructor"]["constructor"]("globalThis.__pwned=1")() }}',
    '{{ x["__proto__"] }}',
    '{{ x["con" ~ "structor"]["con" ~ "structor"]("globalThis.__pwned=1")() }}',
    '{{ x[["constructor"]] }}',
    '{% set p = x.__proto__ %}{{ p }}',
    '{{ x.__defineGetter__ }}',
    '{{ x._private }}',
    '{{ x | __defineGetter__("a", range) }}',
    '{{ x | constructor }}',
    '{{ range | string }}',
    '{{ (range | safe)(3) }}',
    '{{ range }}',
    '{% macro m() %}{% endmacro %}{{ m ~ "" }}',
    '{% set c = cycler(1) %}{{ c.next.call }}',
    '{{ items | join(",", "constructor") }}',
    '{{ items | sum("__proto__") }}',
    '{% set __proto__ = 1 %}',
    '{% set y = {"__proto__": {"polluted": 1}} %}',
    '{% include "other" %}',
    '{% extends "other" %}',
    '{% import "other" as o %}',
    // nunjucks pastes these names into generated code unescaped.
    '{% set "a\\")+(globalThis.__pwned=1)+(\\"" = 1 %}',
    '{{ 1 is "odd\\") + (globalThis.__pwned = 1) + (\\"" }}',
    '{% macro m("a\\")+(globalThis.__pwned=1)+(\\"" = 1) %}{% endmacro %}',
  ])('refuses %s with template_render_error', (source) => {
    const e = failure(() => render('text', source, { x: {}, items: [{}] }));
    expect(e.code).toBe('template_render_error');
    expect(e.details).toMatchObject({ field: 'text', message: expect.any(String) as unknown });
  });

  it('ignores prototype keys in the variables', () => {
    const variables = JSON.parse('{"__proto__": {"polluted": 1}, "a": {"__proto__": {"polluted": 1}}}') as object;
    expect(failure(() => render('text', '{{ a.polluted }}', { ...variables })).code).toBe('template_variable_missing');
    expect(failure(() => render('text', '{{ a.__proto__ }}', { ...variables })).code).toBe('template_render_error');
  });

  it.each([
    ['string doubling', '{% set s = "x" %}{% for i in range(30) %}{% set s = s ~ s %}{% endfor %}{{ s }}'],
    ['list doubling', '{% set a = [1] %}{% for i in range(40) %}{% set a = [a, a] %}{% endfor %}{{ a < 1 }}'],
    ['an amplifying filter', '{{ "a" | center(100000000) }}'],
    ['a huge range', '{% for i in range(1000000000) %}{{ i }}{% endfor %}'],
    ['output past the limit', '{% for i in range(20000) %}0123456789{% endfor %}'],
  ])('stops %s with template_render_error', (_name, source) => {
    expect(failure(() => render('text', source)).code).toBe('template_render_error');
  });

  it('refuses a rendered subject with a line break', () => {
    const e = failure(() => render('subject', 'Hi {{ name }}', { name: 'a\r\nBcc: x@example.com' }));
    expect(e.details).toMatchObject({ field: 'subject' });
  });
});

describe('checkTemplateSyntax', () => {
  it('accepts valid templates and skips missing bodies', () => {
    expect(() => checkTemplateSyntax({ subject_template: 'Hi {{ n }}', html_template: null })).not.toThrow();
  });

  it.each([
    ['subject_template', { subject_template: '{{ oops' }, 1],
    ['html_template', { subject_template: 'ok', html_template: '<p>\n{% if %}' }, 2],
    ['text_template', { subject_template: 'ok', text_template: 'a\nb\n{{ x.constructor }}' }, 3],
  ])('refuses an error in %s with its field and line', (field, sources, line) => {
    const e = failure(() => checkTemplateSyntax(sources));
    expect(e.code).toBe('template_render_error');
    expect(e.details).toEqual({ field, line, message: expect.any(String) as unknown });
  });
});
