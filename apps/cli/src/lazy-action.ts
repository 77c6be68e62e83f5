/**
 * A command's action that imports its implementation when the command runs: `idem status` never
 * loads what `idem replay` or `idem executor` need, and `idem --help` loads none of them. `load`
 * is a dynamic `import()` of the action's module (a separate chunk in the packed CLI); commander's
 * arguments (the positional values, the options, the command) are handed on unchanged.
 */
export function lazyAction<A extends unknown[]>(
  load: () => Promise<(...args: A) => Promise<void>>,
): (...args: A) => Promise<void> {
  return async (...args) => (await load())(...args);
}
