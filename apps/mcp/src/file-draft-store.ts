import { randomBytes } from "node:crypto";
import { link, mkdir, open, readdir, readFile, stat, truncate, unlink } from "node:fs/promises";
import { join } from "node:path";
import { IdemError } from "@idem/schema";
import {
  type DraftChange,
  type DraftState,
  DraftStateSchema,
  type DraftStore,
} from "./draft-store.js";

/** A version file's name: the version, zero-padded so names sort as numbers. */
const VERSION = /^(\d{12})\.json$/;
const versionName = (v: number) => `${String(v).padStart(12, "0")}.json`;
/** A temporary file older than this was left by a process that died writing it. */
const STALE_TEMP_MS = 600_000;

/**
 * A job ID as a folder name that no two job IDs share on any file system: a capital letter is
 * `^` and the letter (case-insensitive file systems), `:` is `^=` (`^` is in no job ID).
 */
export function draftFolderName(jobId: string): string {
  return jobId.replace(/[A-Z:]/g, (c) => (c === ":" ? "^=" : `^${c.toLowerCase()}`));
}

const errno = (e: unknown) => (e as NodeJS.ErrnoException).code;

/**
 * Drafts kept on disk under `dir` (`mcp.draftDir`, default `.idem/drafts` beside the config), one
 * folder per job, so a draft outlives the server process and its session (docs/mcp.md, "Drafts
 * and attempts"). Each change writes the job's whole draft as a new version file and links it
 * into place under the next version's name: a link fails if that name exists, so two processes
 * changing one draft at once cannot both win, and the loser runs its change again on the newer
 * version (compare-and-swap, without a lock that a SIGKILLed holder would leave behind). Each
 * version is fsynced, then its folder. An older version is emptied, never removed: its name stays
 * taken, so a writer that read it long ago cannot link a stale change under a name freed since
 * (an empty file is a version nobody reads). Files are this user's only (0600; folders 0700): a
 * draft holds what agents staged.
 */
export class FileDraftStore implements DraftStore {
  constructor(readonly dir: string) {}

  private folder(jobId: string): string {
    return join(this.dir, draftFolderName(jobId));
  }

  async read(jobId: string): Promise<DraftState | undefined> {
    return (await this.latest(jobId))?.state;
  }

  async update<T>(
    jobId: string,
    change: (current: DraftState | undefined) => DraftChange<T>,
  ): Promise<T> {
    const folder = this.folder(jobId);
    for (;;) {
      const current = await this.latest(jobId);
      const r = change(current?.state);
      if (!r.next) return r.answer;
      const version = (current?.version ?? 0) + 1;
      await mkdir(folder, { recursive: true, mode: 0o700 });
      const temp = join(folder, `tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
      const file = await open(temp, "wx", 0o600);
      try {
        await file.writeFile(`${JSON.stringify(r.next)}\n`);
        await file.sync();
      } finally {
        await file.close();
      }
      try {
        await link(temp, join(folder, versionName(version)));
      } catch (e) {
        if (errno(e) !== "EEXIST") throw e;
        continue; // another change came first: run this one again on it
      } finally {
        await unlink(temp).catch(() => {});
      }
      await syncFolder(folder);
      await this.prune(folder, version);
      return r.answer;
    }
  }

  /** The highest version of the job's draft and its state; undefined when there is none. */
  private async latest(jobId: string): Promise<{ version: number; state: DraftState } | undefined> {
    const folder = this.folder(jobId);
    for (;;) {
      let names: string[];
      try {
        names = await readdir(folder);
      } catch (e) {
        if (errno(e) === "ENOENT") return undefined;
        throw e;
      }
      const versions = names
        .map((n) => VERSION.exec(n)?.[1])
        .filter((v): v is string => v !== undefined)
        .map(Number);
      if (versions.length === 0) return undefined;
      const version = Math.max(...versions);
      const path = join(folder, versionName(version));
      const text = await readFile(path, "utf8");
      if (text === "") continue; // emptied under a newer version meanwhile
      return { version, state: parseDraft(text, path, jobId) };
    }
  }

  /** Empties the versions before `version`, and removes temporaries left by dead writers. */
  private async prune(folder: string, version: number): Promise<void> {
    for (const name of await readdir(folder)) {
      const v = VERSION.exec(name)?.[1];
      if (v !== undefined && Number(v) < version) {
        await truncate(join(folder, name), 0);
      } else if (name.startsWith("tmp-")) {
        const s = await stat(join(folder, name)).catch(() => undefined);
        if (s && Date.now() - s.mtimeMs > STALE_TEMP_MS)
          await unlink(join(folder, name)).catch(() => {});
      }
    }
  }
}

/**
 * A stored draft, checked: a file that is not a draft of this job (edited, or another job's) is
 * refused naming it (INTEGRITY), never staged from.
 */
function parseDraft(text: string, path: string, jobId: string): DraftState {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = undefined;
  }
  const parsed = DraftStateSchema.safeParse(raw);
  if (!parsed.success || parsed.data.jobId !== jobId)
    throw new IdemError(
      "INTEGRITY",
      `the MCP draft ${path} is not job ${jobId}'s draft: move it away to start the job's draft again`,
      { details: { path } },
    );
  return parsed.data;
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
