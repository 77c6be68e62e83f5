import { accessSync, constants, existsSync, statSync } from "node:fs";
import type { DoctorContext, KindFinding } from "@idem/kit";
import type { FileRoots } from "./file-roots.js";

/** `idem doctor`'s check of every root: an existing directory this user can write. Read-only. */
export async function fileWriteDoctor(ctx: DoctorContext<FileRoots>): Promise<KindFinding[]> {
  const findings: KindFinding[] = [];
  for (const [alias, root] of Object.entries(ctx.options)) {
    ctx.checking(`root ${alias}`);
    const key = `roots.${alias}`;
    const path = root.path;
    const bad = (message: string, fix: string) =>
      findings.push({ severity: "violation", key, message, fix });
    if (!existsSync(path)) bad(`root ${path} does not exist`, `mkdir -p ${path}, or fix ${key}`);
    else if (!statSync(path).isDirectory()) bad(`root ${path} is not a directory`, `fix ${key}`);
    else {
      try {
        accessSync(path, constants.W_OK);
      } catch {
        bad(
          `root ${path} is not writable by this user`,
          "chown or chmod it for the user idem runs as",
        );
      }
    }
  }
  return findings;
}
