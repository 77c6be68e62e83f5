// @idem/git: the git engine idem's git kinds write with (objects, the index, ref transactions,
// worktree sync, patches, remotes), in-process where git allows and through `git` where it must.
// Each name is chosen: the kinds (packages/effects/src/kinds/git-*) use nothing else.
export { branchAllowed, namedBranches } from "./branch-names.js";
export {
  checkGitFileContent,
  checkMessage,
  checkRelativePath,
  messageWithTrailer,
  refComponent,
  refuse,
  trailerKeys,
} from "./git-checks.js";
export type { GitRepos, RepoConfig } from "./git-config.js";
export { GitReposSchema, repoDir, repoOf, resolveGitRepos } from "./git-config.js";
export {
  BranchNameSchema,
  CommitMessageSchema,
  EFFECT_TRAILER,
  isSafeBranchName,
} from "./git-names.js";
export type { GitRepoOptions } from "./git-repo.js";
export { GitRepo } from "./git-repo.js";
export { keyRef } from "./key-index.js";
export { appliedInReverse, modeChangesDone, patchApplies } from "./patch/patch-checks.js";
export type { PatchFile } from "./patch/patch-paths.js";
export { parsePatchFiles, patchPaths } from "./patch/patch-paths.js";
export { applyInProcess, patchedTree, writeTree } from "./patch/patch-trees.js";
export { ScratchIndexes } from "./patch/scratch-indexes.js";
export type { ObjectWriter } from "./plumbing/repo-objects.js";
export { runGit } from "./plumbing/run-git.js";
export type { FileChange } from "./plumbing/tree-writer.js";
export { rewriteTree, treeWith } from "./plumbing/tree-writer.js";
export type { CloneProgress } from "./remote/remote-git.js";
