// The exit codes and the failure the CLI reports, apart from context.ts so that `idem --help` and a
// usage error load nothing of idem's packages.

/**
 * The exit codes of docs/cli.md ("Exit codes"): `EXIT_CODES` of @idem/schema, spelled out here so
 * that a usage error loads no package (apps/cli/test/exit-codes.test.ts keeps them equal).
 */
export const EXIT = { OK: 0, FAILED: 1, USAGE: 2, INVARIANT: 3 } as const;

/** A failure the CLI reports in one line and maps to an exit code. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode: number = EXIT.FAILED,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** The exit code set by the command that ran, when it finished without throwing. */
export const exitHolder = { code: EXIT.OK as number };
