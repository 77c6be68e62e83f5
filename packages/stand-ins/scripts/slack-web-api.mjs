// Writes packages/stand-ins/src/slack/slack-web-api.ts: the arguments and the answers of the Slack
// Web API methods the stand-in serves, read from the method reference as @slack/web-api publishes
// it (its TypeScript types: `Methods` in dist/methods.d.ts, each method `(options: Arguments) =>
// Promise<Response>`). Run after upgrading @slack/web-api:
//   node packages/stand-ins/scripts/slack-web-api.mjs
// packages/stand-ins/test/slack-web-api.test.ts fails while the file is not what this writes.
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** The methods the Slack stand-in serves. */
export const SERVED = [
  "auth.test",
  "chat.postMessage",
  "conversations.history",
  "conversations.info",
  "conversations.join",
  "oauth.v2.access",
];

/**
 * Arguments Slack's reference documents as timestamps (`"1712345678.000100"`); the types say
 * `string`. Slack answers a malformed one `invalid_ts_latest` / `invalid_ts_oldest`.
 */
const TIMESTAMPS = new Set(["ts", "thread_ts", "latest", "oldest"]);
/** How deep an answer's shape is followed (message -> metadata -> event_payload). */
const DEPTH = 4;

function kindOf(type) {
  const parts = type.isUnion() ? type.types : [type];
  const kinds = new Set();
  for (const t of parts) {
    const f = t.getFlags();
    if (f & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) continue;
    if (f & ts.TypeFlags.BooleanLike) kinds.add("boolean");
    else if (f & ts.TypeFlags.NumberLike) kinds.add("integer");
    else if (f & ts.TypeFlags.StringLike) kinds.add("string");
    else kinds.add("json");
  }
  if (kinds.size === 1) return [...kinds][0];
  return kinds.has("json") ? "json" : "string";
}

/** The properties of every constituent of `type`: required where every constituent requires it. */
function argumentsOf(checker, type) {
  const parts = type.isUnion() ? type.types : [type];
  const seen = new Map();
  for (const part of parts) {
    for (const p of checker.getPropertiesOfType(part)) {
      const t = checker.getTypeOfSymbol(p);
      const required = (p.getFlags() & ts.SymbolFlags.Optional) === 0;
      const name = p.getName();
      const was = seen.get(name);
      const kind = TIMESTAMPS.has(name) ? "ts" : kindOf(t);
      seen.set(name, {
        type: was && was.type !== kind ? "json" : kind,
        count: (was?.count ?? 0) + 1,
        required: (was?.required ?? true) && required,
      });
    }
  }
  const args = {};
  for (const [name, a] of [...seen].sort(([x], [y]) => x.localeCompare(y))) {
    args[name] =
      a.required && a.count === parts.length ? { type: a.type, required: true } : { type: a.type };
  }
  return args;
}

/** The field names an answer may carry at each level (`[]` for an array's items). */
function shapeOf(checker, type, depth) {
  if (depth === 0) return true;
  const parts = (type.isUnion() ? type.types : [type]).filter(
    (t) => !(t.getFlags() & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)),
  );
  const out = {};
  let object = false;
  for (const t of parts) {
    if (checker.isArrayType(t)) {
      const item = checker.getTypeArguments(t)[0];
      return { "[]": item ? shapeOf(checker, item, depth - 1) : true };
    }
    if (!(t.getFlags() & (ts.TypeFlags.Object | ts.TypeFlags.Intersection))) continue;
    const props = checker.getPropertiesOfType(t);
    // A bare map (`[key: string]: unknown` and nothing else) holds anything; an index signature
    // beside named fields (every answer's WebAPICallResult) does not widen the named ones.
    if (props.length === 0) return true;
    object = true;
    for (const p of props) {
      out[p.getName()] = shapeOf(checker, checker.getTypeOfSymbol(p), depth - 1);
    }
  }
  return object ? out : true;
}

/** The described methods: for each, its arguments (type, required) and its answer's shape. */
export function describeSlackMethods() {
  const require = createRequire(import.meta.url);
  const file = require.resolve("@slack/web-api/dist/methods.d.ts");
  const program = ts.createProgram([file], { strict: true, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  let methods;
  ts.forEachChild(source, (n) => {
    if (ts.isClassDeclaration(n) && n.name?.text === "Methods")
      methods = checker.getTypeAtLocation(n);
  });
  if (!methods) throw new Error("@slack/web-api has no Methods class");
  const version = require("@slack/web-api/package.json").version;
  const out = { version, methods: {} };
  for (const name of SERVED) {
    let t = methods;
    for (const part of name.split(".")) {
      const p = checker.getPropertyOfType(t, part);
      if (!p) throw new Error(`@slack/web-api describes no ${name}`);
      t = checker.getTypeOfSymbol(p);
    }
    const call = t.getCallSignatures()[0];
    const param = call?.getParameters()[0];
    if (!call || !param) throw new Error(`${name} is not a method`);
    const args = checker.getNonNullableType(checker.getTypeOfSymbol(param));
    const result = checker.getAwaitedType(call.getReturnType());
    out.methods[name] = {
      args: argumentsOf(checker, args),
      answer: shapeOf(checker, result, DEPTH),
    };
  }
  return out;
}

/** The generated module's text. */
export function slackWebApiModule() {
  const d = describeSlackMethods();
  return `// @generated by packages/stand-ins/scripts/slack-web-api.mjs from @slack/web-api ${d.version}: do not edit.
// The arguments ("type", "required") and answers (the field names at each level; "[]" an array's
// items, true anything) of the Slack Web API methods the stand-in serves.

/** The Slack Web API's own description, as @slack/web-api's types give it. */
export const SLACK_WEB_API = ${JSON.stringify(d, null, 2)} as const;
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = fileURLToPath(new URL("../src/slack/slack-web-api.ts", import.meta.url));
  writeFileSync(target, slackWebApiModule());
  process.stdout.write(`wrote ${target}\n`);
}
