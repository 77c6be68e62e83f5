import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, IDEM_BIN, idem, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace | undefined;
afterEach(() => {
  ws?.remove();
  ws = undefined;
});

const output = (jobId: string, content = "x") => ({
  jobId,
  agent: "writer",
  effects: [{ kind: "file.write", root: "outbox", path: `${jobId}.txt`, content }],
});

function setup(): Workspace {
  ws = workspace({ roots: { outbox: { path: "outbox" } } });
  return ws;
}

function write(w: Workspace, name: string, text: string): string {
  const file = join(w.dir, name);
  writeFileSync(file, text);
  return file;
}

const jsonLines = (values: unknown[]) => `${values.map((v) => JSON.stringify(v)).join("\n")}\n`;

async function outputsIn(w: Workspace): Promise<number> {
  const r = await idem(["status", "--json", "--config", w.config]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).outputs;
}

describe("idem submit with a batch", () => {
  it("records JSON Lines in one process and says how many; the same file again is all duplicates (exit 0)", async () => {
    const w = setup();
    const outputs = Array.from({ length: 200 }, (_, i) => output(`s-${i}`));
    const file = write(w, "batch.jsonl", jsonLines(outputs));
    const r = await idem(["submit", file, "--config", w.config]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("200 outputs: recorded 200, duplicate 0\n");
    expect(await outputsIn(w)).toBe(200);

    const again = await idem(["submit", file, "--json", "--config", w.config]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(
      outputs.map((o) => ({ status: "duplicate", jobId: o.jobId })),
    );
  });

  it("takes a JSON array on stdin and answers --json with an array in file order; a single output stays an object", async () => {
    const w = setup();
    const r = await idem(["submit", "-", "--json", "--config", w.config], {
      input: JSON.stringify([output("a-1"), output("a-2")]),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { status: "recorded", jobId: "a-1" },
      { status: "recorded", jobId: "a-2" },
    ]);
    const one = await idem(["submit", "-", "--json", "--config", w.config], {
      input: JSON.stringify(output("a-3")),
    });
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual({ status: "recorded", jobId: "a-3" });
    const ofOne = write(w, "one.ndjson", jsonLines([output("a-4")]));
    const batchOfOne = await idem(["submit", ofOne, "--json", "--config", w.config]);
    expect(JSON.parse(batchOfOne.stdout)).toEqual([{ status: "recorded", jobId: "a-4" }]);
  });

  it("refuses the whole file when any output is invalid, naming each line and field, and records nothing (exit 1)", async () => {
    const w = setup();
    const file = write(
      w,
      "bad.jsonl",
      jsonLines([
        output("v-1"),
        {
          ...output("v-2"),
          effects: [{ kind: "file.write", root: "nowhere", path: "a", content: "" }],
        },
        output("v-3"),
        output("v-1", "other"),
      ]),
    );
    const r = await idem(["submit", file, "--config", w.config]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/2 problem\(s\) in .*bad\.jsonl: nothing recorded/);
    expect(r.stderr).toMatch(/line 2 effects\.0\.root: /);
    expect(r.stderr).toMatch(/line 4: job v-1 has another output than at line 1/);
    expect(await outputsIn(w)).toBe(0);

    const json = await idem(["submit", file, "--json", "--config", w.config]);
    expect(json.code).toBe(1);
    const answers = JSON.parse(json.stdout) as {
      status: string;
      jobId: string;
      issues: unknown[];
    }[];
    expect(answers.map((a) => [a.status, a.jobId])).toEqual([
      ["invalid", "v-1"],
      ["invalid", "v-2"],
      ["invalid", "v-3"],
      ["invalid", "v-1"],
    ]);
    expect(answers[1]?.issues).toContainEqual(expect.objectContaining({ path: "effects.0.root" }));
    expect(await outputsIn(w)).toBe(0);
  });

  it("records the rest and exits 1 when one output conflicts with what is recorded", async () => {
    const w = setup();
    const first = await idem(["submit", "-", "--config", w.config], {
      input: JSON.stringify(output("c-1")),
    });
    expect(first.code, first.stderr).toBe(0);
    const file = write(w, "batch.json", JSON.stringify([output("c-1", "other"), output("c-2")]));
    const r = await idem(["submit", file, "--json", "--config", w.config]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual([
      { status: "conflict", jobId: "c-1" },
      { status: "recorded", jobId: "c-2" },
    ]);
    const human = await idem(["submit", file, "--config", w.config]);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^2 outputs: recorded 0, duplicate 1, conflict 1/);
    expect(human.stdout).toMatch(/\[0\]: conflict c-1/);
  });
});

describe("idem submit on a terminal", () => {
  it("shows a progress bar for a large batch and still prints the counts", async () => {
    const w = setup();
    const file = write(
      w,
      "batch.jsonl",
      jsonLines(Array.from({ length: 60 }, (_, i) => output(`t-${i}`))),
    );
    // script(1) gives the process a pseudo-terminal for stdout and stderr alike.
    const command = `${process.execPath} ${IDEM_BIN} submit ${file} --config ${w.config}`;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn("script", ["-qefc", command, "/dev/null"], {
        env: cleanEnv(),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let text = "";
      child.stdout.on("data", (d: Buffer) => {
        text += d.toString();
      });
      child.on("error", reject);
      child.on("close", () => resolve(text));
    });
    expect(out).toMatch(/recording \[.*\] \d+\/60 outputs/);
    expect(out).toContain("60 outputs: recorded 60, duplicate 0");
  });
});
