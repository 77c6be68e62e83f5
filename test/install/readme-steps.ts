// Following a README word for word: its fenced blocks marked `<!-- idem:background -->` (a command
// left running, as in a first terminal), `<!-- idem:run -->` (commands run one after another, as
// in a second terminal) and `<!-- idem:expect -->` (what you should see from the run before it:
// each line found in order in the output, `…` standing for what differs from run to run).
import { expect } from "vitest";
import { MINUTE, type Running, run, start, waitFor } from "./installed.js";

/** One marked block of a README, in order. */
export interface ReadmeStep {
  kind: "background" | "run" | "expect";
  lines: string[];
}

/** The marked blocks of `markdown`, in order; a command's `# comment` left out. */
export function readmeSteps(markdown: string): ReadmeStep[] {
  const steps: ReadmeStep[] = [];
  const re = /<!-- idem:(background|run|expect) -->\n```[a-z]*\n([\s\S]*?)\n```/g;
  for (const m of markdown.matchAll(re)) {
    const kind = m[1] as ReadmeStep["kind"];
    const lines = (m[2] as string)
      .split("\n")
      .map((l) => (kind === "expect" ? l : l.replace(/\s+#.*$/, "").trim()))
      .filter((l) => l.trim() !== "");
    steps.push({ kind, lines });
  }
  return steps;
}

/** Whether `output` holds each expected line, in order, each `…` matching anything. */
export function shows(output: string, expected: readonly string[]): boolean {
  const lines = output.split("\n");
  let at = 0;
  for (const want of expected) {
    const parts = want.split("…").filter((p) => p !== "");
    const found = lines.findIndex((line, i) => {
      if (i < at) return false;
      let from = 0;
      for (const p of parts) {
        const j = line.indexOf(p, from);
        if (j < 0) return false;
        from = j + p.length;
      }
      return true;
    });
    if (found < 0) return false;
    at = found + 1;
  }
  return true;
}

/**
 * Runs a README's steps in `dir` with `sh`, as a person would type them: the background command
 * started and left running, each run block's commands one after another (each must exit 0), and
 * each expectation checked against the run block before it, which is run again (at most for a
 * minute) while it does not show it yet: what a person does who waits a second and looks again.
 * The background command is stopped with SIGINT (Ctrl-C) at the end and must exit 0.
 */
export async function followReadme(
  markdown: string,
  opts: { dir: string; env: NodeJS.ProcessEnv },
): Promise<{ steps: number; background: string }> {
  const steps = readmeSteps(markdown);
  let background: Running | undefined;
  let last: { lines: string[]; output: string } | undefined;
  const runBlock = async (lines: string[]) => {
    let output = "";
    for (const line of lines) {
      const r = await run("sh", ["-c", line], {
        cwd: opts.dir,
        env: opts.env,
        timeoutMs: 2 * MINUTE,
      });
      expect(r.code, `${line}: ${r.stdout}${r.stderr}`).toBe(0);
      output += r.stdout + r.stderr;
    }
    return output;
  };
  try {
    for (const step of steps) {
      if (step.kind === "background") {
        expect(background, "one background command").toBeUndefined();
        background = start("sh", ["-c", `exec ${step.lines.join(" && ")}`], {
          cwd: opts.dir,
          env: opts.env,
        });
      } else if (step.kind === "run") {
        if (background && background.child.exitCode !== null)
          throw new Error(`the background command exited: ${background.output()}`);
        last = { lines: step.lines, output: await runBlock(step.lines) };
      } else {
        const block = last;
        if (!block) throw new Error("an expectation before any command");
        await waitFor(
          `${block.lines.join("; ")} to show ${JSON.stringify(step.lines)}`,
          async () => {
            if (shows(block.output, step.lines)) return true;
            block.output = await runBlock(block.lines);
            return shows(block.output, step.lines);
          },
          MINUTE,
        ).catch((e: Error) => {
          throw new Error(`${e.message}; it showed:\n${block.output}`);
        });
      }
    }
  } finally {
    if (background) {
      const end = await background.stop("SIGINT");
      expect(end.code, background.output()).toBe(0);
    }
  }
  return { steps: steps.length, background: background?.output() ?? "" };
}
