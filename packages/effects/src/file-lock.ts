// The lock file a kind keeps on a target (flock(2), holding `{ pid, host, since }`), shared by the
// kinds' folders: file.write's per-root lock (the git engine keeps its own per repository).
export { FileLock } from "@idem/runtime";
