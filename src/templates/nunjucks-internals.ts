/**
 * A typed view of the nunjucks internals the sandbox is built on: the parser,
 * the code generator, the runtime helpers the generated code calls, and the AST
 * node base class. They are undocumented (the public typings stop at
 * Environment and Template), so these shapes are pinned to nunjucks 3.2.4 and
 * checked by the sandbox tests.
 */
import nunjucks from 'nunjucks';

/** A parsed template node; its own fields depend on `typename`. */
export interface AstNode {
  readonly typename: string;
  readonly fields: readonly string[];
  readonly lineno: number;
  readonly colno: number;
  readonly [field: string]: unknown;
}

/** The compile-time scope: names bound to JavaScript locals (loop variables, macro arguments). */
export interface CompileFrame {
  lookup(name: string): string | null | undefined;
}

export interface CompilerInstance {
  /** Name of the JavaScript variable the current output goes to. */
  buffer: string;
  codebuf: string[];
  compile(node: AstNode, frame?: CompileFrame): void;
  getCode(): string;
  compileSymbol(node: AstNode, frame: CompileFrame): void;
  compileLookupVal(node: AstNode, frame: CompileFrame): void;
  compileConcat(node: AstNode, frame: CompileFrame): void;
  compileAdd(node: AstNode, frame: CompileFrame): void;
  compileArray(node: AstNode, frame: CompileFrame): void;
  compileOutput(node: AstNode, frame: CompileFrame): void;
  compileLiteral(node: AstNode, frame: CompileFrame): void;
  _getNodeName(node: AstNode): string;
  _emit(code: string): void;
  _emitLine(code: string): void;
  _compileExpression(node: AstNode, frame: CompileFrame): void;
  _compileAggregate(node: AstNode, frame: CompileFrame, start: string, end: string): void;
}

/** A runtime scope: what `{% set %}`, loops and macros bind while a template runs. */
export interface RuntimeFrame {
  topLevel: boolean;
  lookup(name: string): unknown;
}

export type RenderCallback = (err: unknown, result?: unknown) => void;
/** The signature of the generated `root` and `b_<block>` functions. */
export type RootRenderFn = (
  env: unknown,
  context: unknown,
  frame: RuntimeFrame,
  runtime: unknown,
  cb: RenderCallback,
) => void;

type AnyFn = (...args: never[]) => unknown;

/** Text marked as trusted HTML by the `safe` filter or a macro: never escaped again. */
export interface SafeStringLike {
  readonly val: string;
  readonly length: number;
}

export interface NunjucksRuntime {
  readonly Frame: new () => RuntimeFrame;
  readonly SafeString: abstract new (val: string) => SafeStringLike;
  makeMacro(argNames: string[], kwargNames: string[], func: AnyFn): AnyFn;
  handleError(error: unknown, lineno: number, colno: number): unknown;
  suppressValue(val: unknown, autoescape: boolean): unknown;
  inOperator(key: unknown, val: unknown): boolean;
}

export interface TemplateErrorLike extends Error {
  lineno?: number;
  colno?: number;
  cause?: unknown;
}

interface Internals {
  readonly parser: { parse(src: string, extensions: unknown[], opts: object): AstNode };
  readonly compiler: { Compiler: new (templateName: string, throwOnUndefined: boolean) => CompilerInstance };
  readonly runtime: NunjucksRuntime;
  readonly nodes: { Node: abstract new () => AstNode };
  readonly lib: { TemplateError: abstract new () => TemplateErrorLike };
}

export const internals = nunjucks as unknown as Internals;

/** True for a parsed template node (as opposed to a literal value held in a node field). */
export function isAstNode(value: unknown): value is AstNode {
  return value instanceof internals.nodes.Node;
}

/** True for an error raised by nunjucks itself (parser, compiler, or a runtime helper). */
export function isTemplateError(value: unknown): value is TemplateErrorLike {
  return value instanceof internals.lib.TemplateError;
}
