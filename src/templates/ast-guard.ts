/**
 * Checks a parsed template before any code is generated from it. nunjucks
 * pastes some names straight into the JavaScript it generates (set targets,
 * macro keyword names, test names, block names), so a quoted string in one of
 * those places would inject code; only plain identifiers pass here. It also
 * refuses the tags that load other templates, names blocked by the sandbox, and
 * marks the expressions where a missing variable is allowed.
 */
import { blockedAttribute, isBlockedAttribute, isBlockedVariable, SandboxViolation } from './failures.ts';
import { isAstNode, type AstNode } from './nunjucks-internals.ts';

// Everything the synchronous template language needs. Not here: extends,
// include, import and from-import (a stored template stands alone), the async
// tags, and extension calls.
const ALLOWED_NODES = new Set([
  ...['Root', 'NodeList', 'Output', 'TemplateData', 'Literal', 'Symbol', 'Group', 'Array', 'Dict', 'Pair'],
  ...['KeywordArgs', 'LookupVal', 'If', 'InlineIf', 'For', 'Macro', 'Caller', 'FunCall', 'Filter', 'Block'],
  ...['Set', 'Switch', 'Case', 'Capture', 'In', 'Is', 'Or', 'And', 'Not', 'Add', 'Concat', 'Sub', 'Mul'],
  ...['Div', 'FloorDiv', 'Mod', 'Pow', 'Neg', 'Pos', 'Compare', 'CompareOperand'],
]);
const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_]*$/;
// decisions.md: "`{% if x is defined %}` and `| default(...)` do not count as use."
const LENIENT_TESTS = new Set(['defined', 'undefined']);
const LENIENT_FILTERS = new Set(['default', 'd']);

/** Throws SandboxViolation for anything the sandbox refuses; returns the nodes that may be undefined. */
export function guardTemplate(root: AstNode): WeakSet<AstNode> {
  const lenient = new WeakSet<AstNode>();
  const visit = (node: AstNode): void => {
    if (!ALLOWED_NODES.has(node.typename)) {
      throw new SandboxViolation(`'${node.typename}' is not allowed in templates`, lineOf(node));
    }
    checkNode(node, lenient);
    for (const child of childNodes(node)) visit(child);
  };
  visit(root);
  return lenient;
}

/** The 1-based line of a node, when the parser recorded one. */
export function lineOf(node: AstNode): number | undefined {
  return Number.isInteger(node.lineno) ? node.lineno + 1 : undefined;
}

function childNodes(node: AstNode): AstNode[] {
  return node.fields.flatMap((f) => [node[f]].flat()).filter(isAstNode);
}

function checkNode(node: AstNode, lenient: WeakSet<AstNode>): void {
  switch (node.typename) {
    case 'Symbol':
      return checkVariableName(node);
    case 'LookupVal':
      return checkLiteralAttribute(node.val);
    case 'Pair':
      return checkLiteralAttribute(node.key);
    case 'Set':
      return expectSymbols(node.targets as AstNode[], node);
    case 'For':
      return expectSymbols(asList(node.name), node);
    case 'Macro':
    case 'Caller':
      return checkMacroSignature(node);
    case 'Block':
      return expectSymbols([node.name as AstNode], node);
    case 'Is':
      return checkTest(node, lenient);
    case 'Filter':
      if (LENIENT_FILTERS.has(symbolName(node.name))) markLenient(firstArg(node), lenient);
      return;
  }
}

function checkVariableName(node: AstNode): void {
  const name = String(node.value);
  if (isBlockedVariable(name)) throw new SandboxViolation(`the name '${name}' is not allowed`, lineOf(node));
  if (!IDENTIFIER.test(name)) throw new SandboxViolation(`'${name}' is not a valid name`, lineOf(node));
}

// `x.constructor` and `x["__proto__"]` are refused when the template is saved;
// computed names (`x["con" ~ "structor"]`) are refused by the runtime lookup.
function checkLiteralAttribute(node: unknown): void {
  if (!isAstNode(node) || node.typename !== 'Literal' || typeof node.value !== 'string') return;
  if (isBlockedAttribute(node.value)) throw blockedAttribute(node.value, lineOf(node));
}

function expectSymbols(nodes: AstNode[], owner: AstNode): void {
  for (const n of nodes) {
    if (!isAstNode(n) || n.typename !== 'Symbol') throw new SandboxViolation('expected a name', lineOf(owner));
  }
}

function asList(node: unknown): AstNode[] {
  return isAstNode(node) && node.typename === 'Array' ? (node.children as AstNode[]) : [node as AstNode];
}

// Macro argument and keyword names become JavaScript identifiers and string
// literals in the generated code without escaping.
function checkMacroSignature(node: AstNode): void {
  expectSymbols([node.name as AstNode], node);
  const args = (node.args as AstNode).children as AstNode[];
  for (const arg of args) {
    if (arg.typename === 'KeywordArgs' || arg.typename === 'Dict') {
      expectSymbols(
        (arg.children as AstNode[]).map((pair) => pair.key as AstNode),
        node,
      );
    } else expectSymbols([arg], node);
  }
}

function checkTest(node: AstNode, lenient: WeakSet<AstNode>): void {
  const test = node.right as AstNode;
  const name = test.typename === 'FunCall' ? (test.name as AstNode) : test;
  // `x is none` parses `none` as the literal null, which names the `null` test.
  if (name.typename === 'Literal' && name.value === null) return;
  expectSymbols([name], node);
  if (LENIENT_TESTS.has(String(name.value))) markLenient(node.left, lenient);
}

function symbolName(node: unknown): string {
  return isAstNode(node) && node.typename === 'Symbol' ? String(node.value) : '';
}

function firstArg(filter: AstNode): unknown {
  return ((filter.args as AstNode).children as AstNode[])[0];
}

// `user.name is defined` and `user.name | default("x")` tolerate a missing
// `user` as well as a missing `name`: the whole lookup chain is lenient.
function markLenient(node: unknown, lenient: WeakSet<AstNode>): void {
  if (!isAstNode(node)) return;
  if (node.typename === 'Symbol') lenient.add(node);
  if (node.typename === 'LookupVal') {
    lenient.add(node);
    markLenient(node.target, lenient);
  }
}
