/**
 * Turns template source into JavaScript with nunjucks' own code generator,
 * after the AST guard, and with two lookups redirected: every variable and
 * every attribute read goes through the sandbox runtime (`contextOrFrameLookup`,
 * `memberLookup`, or their lenient twins inside `is defined` / `default`), and
 * carries the template line and a readable name for its error.
 */
import { guardTemplate, lineOf } from './ast-guard.ts';
import { SandboxViolation } from './failures.ts';
import { internals, type AstNode, type CompileFrame, type RootRenderFn } from './nunjucks-internals.ts';

export interface CompiledTemplate {
  readonly root: RootRenderFn;
  readonly blocks: ReadonlyMap<string, RootRenderFn>;
}

const MAX_CODE_CHARS = 8 * 1024 * 1024;

class SandboxCompiler extends internals.compiler.Compiler {
  private readonly lenient: WeakSet<AstNode>;

  constructor(lenient: WeakSet<AstNode>) {
    super('template', false);
    this.lenient = lenient;
  }

  override compileSymbol(node: AstNode, frame: CompileFrame): void {
    const name = String(node.value);
    // Loop variables and macro arguments are JavaScript locals at this point.
    const local = frame.lookup(name);
    if (local) {
      this._emit(local);
      return;
    }
    const lookup = this.lenient.has(node) ? 'lenientLookup' : 'contextOrFrameLookup';
    this._emit(`runtime.${lookup}(context, frame, ${JSON.stringify(name)}, ${lineOf(node) ?? 'undefined'})`);
  }

  override compileLookupVal(node: AstNode, frame: CompileFrame): void {
    const lookup = this.lenient.has(node) ? 'lenientMemberLookup' : 'memberLookup';
    this._emit(`runtime.${lookup}((`);
    this._compileExpression(node.target as AstNode, frame);
    this._emit('),');
    this._compileExpression(node.val as AstNode, frame);
    const path = JSON.stringify(describeNode(node.target as AstNode));
    this._emit(`, ${path}, ${lineOf(node) ?? 'undefined'})`);
  }

  // nunjucks pastes this name into the generated code escaping `"` but not
  // `\`, so a crafted attribute string could end the literal: keep it plain.
  override _getNodeName(node: AstNode): string {
    return describeNode(node);
  }

  // The operators that can grow a string, and list literals, go through the
  // runtime so their size is held to the sandbox limits (sandbox-limits.ts).
  override compileConcat(node: AstNode, frame: CompileFrame): void {
    this.emitCall('concat', [node.left as AstNode, node.right as AstNode], frame);
  }

  override compileAdd(node: AstNode, frame: CompileFrame): void {
    this.emitCall('add', [node.left as AstNode, node.right as AstNode], frame);
  }

  override compileArray(node: AstNode, frame: CompileFrame): void {
    this._emit('runtime.list(');
    this._compileAggregate(node, frame, '[', ']');
    this._emit(')');
  }

  // As nunjucks' compileOutput, but every write goes through appendOutput.
  override compileOutput(node: AstNode, frame: CompileFrame): void {
    for (const child of node.children as AstNode[]) {
      if (child.typename === 'TemplateData' && !child.value) continue;
      this._emit(`${this.buffer} = runtime.appendOutput(context, ${this.buffer}, `);
      if (child.typename === 'TemplateData') this.compileLiteral(child, frame);
      else this.emitCall('suppressValue', [child], frame, ', env.opts.autoescape');
      this._emitLine(');');
    }
  }

  // A huge template would make one huge code string and function: refuse it
  // before the join (see sandbox-limits.ts on single large allocations).
  override getCode(): string {
    const chars = this.codebuf.reduce((n, part) => n + part.length, 0);
    if (chars > MAX_CODE_CHARS) throw new SandboxViolation('the template is too large or too complex to compile');
    return super.getCode();
  }

  private emitCall(fn: string, args: AstNode[], frame: CompileFrame, extra = ''): void {
    this._emit(`runtime.${fn}(`);
    args.forEach((arg, i) => {
      if (i > 0) this._emit(', ');
      this.compile(arg, frame);
    });
    this._emit(`${extra})`);
  }
}

/** A readable, code-safe name of an expression for error messages (`user.name`, `items[0]`). */
export function describeNode(node: AstNode): string {
  return rawName(node).replace(/[^\w.()[\] -]/g, '?');
}

function rawName(node: AstNode): string {
  switch (node.typename) {
    case 'Symbol':
      return String(node.value);
    case 'FunCall':
      return `${rawName(node.name as AstNode)}()`;
    case 'LookupVal': {
      const base = rawName(node.target as AstNode);
      const val = node.val as AstNode;
      if (val.typename !== 'Literal') return `${base}[...]`;
      return typeof val.value === 'number' ? `${base}[${val.value}]` : `${base}.${String(val.value)}`;
    }
    default:
      return '(expression)';
  }
}

/** Parses, guards and compiles one template; throws TemplateError or SandboxViolation. */
export function compileTemplate(source: string): CompiledTemplate {
  const ast = internals.parser.parse(source, [], {});
  const compiler = new SandboxCompiler(guardTemplate(ast));
  compiler.compile(ast);
  // This is how nunjucks itself loads generated code (Template#_compile); the
  // guard has vetted every name that the generator pastes in unescaped.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const load = new Function(compiler.getCode()) as () => Record<string, RootRenderFn>;
  const props = load();
  const blocks = new Map<string, RootRenderFn>();
  for (const [key, fn] of Object.entries(props)) if (key.startsWith('b_')) blocks.set(key.slice(2), fn);
  if (!props.root) throw new Error('nunjucks produced no root function');
  return { root: props.root, blocks };
}

// A worker renders the same few templates over and over: keep their compiled
// form, bounded by count and by source size (sources may be up to 1 MiB).
const CACHE_ENTRIES = 200;
const CACHE_CHARS = 4 * 1024 * 1024;
const cache = new Map<string, CompiledTemplate>();
let cachedChars = 0;

/** compileTemplate with a small LRU cache keyed by the source text. */
export function compileTemplateCached(source: string): CompiledTemplate {
  const hit = cache.get(source);
  if (hit) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  const compiled = compileTemplate(source);
  cache.set(source, compiled);
  cachedChars += source.length;
  for (const key of cache.keys()) {
    if (cache.size <= CACHE_ENTRIES && cachedChars <= CACHE_CHARS) break;
    cache.delete(key);
    cachedChars -= key.length;
  }
  return compiled;
}
