/**
 * Whether an entry of `repos.<alias>.branches` is a safe branch name, or a pattern: a safe prefix
 * followed by one `*` (`idem/*`, `pr-*`) that allows every safe branch name starting with it (a
 * branch per job). Never throws.
 */
export function isSafeBranchPattern(b: string): boolean {
  if (!b.endsWith("*")) return isSafeBranchName(b);
  const prefix = b.slice(0, -1);
  return prefix.length > 0 && !prefix.includes("*") && isSafeBranchName(`${prefix}x`);
}

/**
 * Whether a repo's config allows `branch`: its default branch, one of its `branches`, or a name
 * one of their patterns (`idem/*`) allows. The name itself is checked apart (`isSafeBranchName`).
 * Pure; never throws.
 */
export function branchAllowed(
  repo: { branch: string; branches: readonly string[] },
  branch: string,
) {
  if (branch === repo.branch) return true;
  return repo.branches.some((b) =>
    b.endsWith("*") ? branch.startsWith(b.slice(0, -1)) && branch.length >= b.length : b === branch,
  );
}

/** The exact branches of a repo's config (its patterns left out): the branches that exist for sure. */
export function namedBranches(repo: { branch: string; branches: readonly string[] }): string[] {
  return [repo.branch, ...repo.branches.filter((b) => !b.endsWith("*"))];
}

/**
 * Whether a branch name is safe for git and for idem.
 *
 * A static approximation of `git check-ref-format --branch`, plus idem's own rule that a branch may
 * not look like an option (`-x`). The effects package also asks git itself before writing. Never
 * throws.
 */
export function isSafeBranchName(b: string): boolean {
  if (b.length === 0 || b.length > 200) return false;
  if (
    b.startsWith("-") ||
    b.startsWith("/") ||
    b.endsWith("/") ||
    b.endsWith(".") ||
    b.endsWith(".lock")
  )
    return false;
  if (b === "@" || b === "HEAD") return false;
  if (/\.\.|@\{|\/\/|[\x00-\x20\x7f~^:?*[\\]/.test(b)) return false;
  return b
    .split("/")
    .every((part) => part.length > 0 && !part.startsWith(".") && !part.endsWith(".lock"));
}
