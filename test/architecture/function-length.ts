import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import type { KnownViolation } from "./known-during-refactor.js";
import { sourceFolders } from "./source-graph.js";

/** The longest a function may be, in lines (its signature to its closing brace). */
export const MAX_FUNCTION_LINES = 100;

/** A function's name as a reader finds it: declared, a method's, or the variable it is bound to. */
function nameOf(node: ts.Node, file: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name) return named.name.getText(file);
  let up: ts.Node | undefined = node.parent;
  while (up && (ts.isCallExpression(up) || ts.isParenthesizedExpression(up))) up = up.parent;
  if (up && (ts.isVariableDeclaration(up) || ts.isPropertyAssignment(up)))
    return up.name.getText(file);
  const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
  return `<anonymous at line ${line + 1}>`;
}

const isFunction = (n: ts.Node): n is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(n) ||
  ts.isFunctionExpression(n) ||
  ts.isArrowFunction(n) ||
  ts.isMethodDeclaration(n) ||
  ts.isConstructorDeclaration(n) ||
  ts.isGetAccessorDeclaration(n) ||
  ts.isSetAccessorDeclaration(n);

/** Every function of one file's text longer than `max` lines, by name, with its length. */
export function longFunctionsIn(
  path: string,
  text: string,
  max = MAX_FUNCTION_LINES,
): KnownViolation[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const out: KnownViolation[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node) && node.body) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max)
        out.push({ rule: `max-${max}-line-functions`, from: path, to: nameOf(node, file), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

/** Every function of packages/*\/src and apps/*\/src (tests excepted) longer than the budget. */
export function longFunctions(root: string, max = MAX_FUNCTION_LINES): KnownViolation[] {
  const out: KnownViolation[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!/^(test|__tests__|migrations)$/.test(entry.name)) walk(path);
      } else if (
        /\.[cm]?ts$/.test(entry.name) &&
        !/\.d\.[cm]?ts$/.test(entry.name) &&
        !/\.(test|spec)\.[cm]?ts$/.test(entry.name)
      ) {
        out.push(...longFunctionsIn(path, readFileSync(join(root, path), "utf8"), max));
      }
    }
  };
  for (const folder of sourceFolders(root)) walk(folder);
  return out;
}
