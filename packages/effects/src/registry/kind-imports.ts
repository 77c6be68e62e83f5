/**
 * What must be done once in a process before its first kind module is imported, and only then: the
 * idem command line's module resolution hooks (a kind in an empty folder importing `@idem/kit` and
 * `zod` gets the CLI's own). Registering those hooks starts a hooks thread that every later import
 * waits on, which a command that loads no kind module (an enqueue, a status) would pay for nothing.
 * A subpath export of its own (`@idem/effects/kind-imports`), so an entry point sets it without
 * loading the kinds.
 */
let pending: (() => void) | undefined;

/** Sets what {@link prepareKindImport} runs before the first kind module import (the last one set). */
export function beforeFirstKindImport(prepare: () => void): void {
  pending = prepare;
}

/** Runs what was set by {@link beforeFirstKindImport}, once; called right before a kind module import. */
export function prepareKindImport(): void {
  const prepare = pending;
  pending = undefined;
  prepare?.();
}
