// Node module resolution hooks (module.register) of the idem command line, run in Node's hooks
// thread: a kind module that imports `@idem/kit` (or `zod`) with no copy beside it gets the CLI's
// own, so a kind in an empty folder works with the CLI installed globally (docs/effect-kinds.md).
// What resolves beside the kind (its own install) is used first. Imports nothing: the hooks
// thread loads this file alone.

/** What `provideKindImports` hands the hooks: the kit's entry files the CLI carries, and its own URL. */
export interface KindImportsData {
  /** `@idem/kit`, `@idem/kit/test`, `@idem/kit/drill`: a file URL of the CLI's bundled entry. */
  provided: Record<string, string>;
  /** The CLI's own module URL: other provided packages (zod) are resolved as from there. */
  cliUrl: string;
}

/** The packages the CLI provides to kind modules. */
const PROVIDED_PACKAGES = ["@idem/kit", "zod"];

let data: KindImportsData = { provided: {}, cliUrl: "" };

export function initialize(given: KindImportsData): void {
  data = given;
}

type Resolved = { url: string; format?: string | null; shortCircuit?: boolean };
type NextResolve = (specifier: string, context: { parentURL?: string }) => Promise<Resolved>;

const packageOf = (specifier: string): string =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

export async function resolve(
  specifier: string,
  context: { parentURL?: string; conditions?: string[] },
  nextResolve: NextResolve,
): Promise<Resolved> {
  try {
    return await nextResolve(specifier, context);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code !== "ERR_MODULE_NOT_FOUND" || !PROVIDED_PACKAGES.includes(packageOf(specifier)))
      throw e;
    const bundled = data.provided[specifier];
    if (bundled !== undefined) return { url: bundled, format: "module", shortCircuit: true };
    if (data.cliUrl === "") throw e;
    return nextResolve(specifier, { ...context, parentURL: data.cliUrl });
  }
}
