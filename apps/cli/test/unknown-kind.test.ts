import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { idem, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace | undefined;
afterEach(() => {
  ws?.remove();
  ws = undefined;
});

describe("an output naming a kind that is not registered", () => {
  it("is refused before record, exit 1, naming the kind and the registered ones; the journal is unchanged", async () => {
    ws = workspace({ roots: { outbox: { path: "outbox" } } });
    const good = {
      jobId: "k-1",
      agent: "writer",
      effects: [{ kind: "file.write", root: "outbox", path: "a.txt", content: "a" }],
    };
    writeFileSync(join(ws.dir, "good.json"), JSON.stringify(good));
    const first = await idem(["submit", join(ws.dir, "good.json"), "--config", ws.config]);
    expect(first.code, first.stderr).toBe(0);
    const before = JSON.parse((await idem(["status", "--json", "--config", ws.config])).stdout);

    const output = {
      jobId: "k-2",
      agent: "writer",
      effects: [{ kind: "acme.ticket", title: "no such kind here" }],
    };
    writeFileSync(join(ws.dir, "output.json"), JSON.stringify(output));
    const r = await idem(["submit", join(ws.dir, "output.json"), "--json", "--config", ws.config]);
    expect(r.code).toBe(1);
    const answer = JSON.parse(r.stdout) as {
      status: string;
      issues: { path: string; message: string }[];
    };
    expect(answer.status).toBe("invalid");
    expect(answer.issues.map((i) => i.path)).toEqual(["effects.0.kind"]);
    expect(answer.issues[0]?.message).toContain("acme.ticket");
    expect(answer.issues[0]?.message).toContain("file.write");
    const after = JSON.parse((await idem(["status", "--json", "--config", ws.config])).stdout);
    expect(after).toEqual(before);
    expect((await idem(["show", "k-2", "--config", ws.config])).stdout).not.toContain("acme");
  });

  it("names the config's section an available built-in kind needs (github)", async () => {
    ws = workspace({});
    const output = {
      jobId: "k-3",
      agent: "writer",
      effects: [{ kind: "github.issue", repo: "app", title: "t" }],
    };
    writeFileSync(join(ws.dir, "output.json"), JSON.stringify(output));
    const r = await idem(["submit", join(ws.dir, "output.json"), "--json", "--config", ws.config]);
    expect(r.code).toBe(1);
    const answer = JSON.parse(r.stdout) as { issues: { path: string; message: string }[] };
    expect(answer.issues.map((i) => i.path)).toEqual(["effects.0.kind"]);
    expect(answer.issues[0]?.message).toContain("github section");
  });
});
