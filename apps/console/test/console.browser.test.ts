// The console in a real browser (Debian's chromium through playwright-core) over a journal made by
// `idem demo`, next to the CLI's own answers. Needs the build (`npm run build`). Screenshots of
// every page go to docs/console/.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipUnless } from "../../../test/support/skip.js";
import { type ConsoleChild, git, idem, idemJson, startConsoleChild, until } from "./harness.js";

/**
 * Where the screenshots go: docs/console/ with IDEM_CONSOLE_SCREENSHOTS=1 (how the docs' are
 * refreshed), else the suite's temp dir, so a test run leaves the working tree as it was.
 */
const DOCS_SHOTS = resolve(dirname(fileURLToPath(import.meta.url)), "../../../docs/console");
let shotsDir = DOCS_SHOTS;
const CHROMIUM = process.env.IDEM_CHROMIUM ?? "/usr/bin/chromium";
/**
 * Without a chromium the suite is skipped (a fresh clone's `npm test` still passes), except in CI,
 * where `.ci/run` installs Debian's chromium and sets IDEM_REQUIRE_CHROMIUM=1: missing, it fails.
 */
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM && process.env.IDEM_REQUIRE_CHROMIUM === "1")
  throw new Error(`CI: no chromium at ${CHROMIUM} (.ci/run installs it with apt-get)`);

let tmp: string;
let ws: string;
let repo: string;
let main: ConsoleChild;
let browser: Browser;
let page: Page;

const shot = (p: Page, name: string) =>
  p.screenshot({ path: join(shotsDir, `${name}.png`), fullPage: true });

/** The number shown in `[data-k=k]`. */
const count = async (p: Page, k: string) =>
  Number(await p.locator(`[data-k="${k}"]`).first().textContent());

/** Every `Idem-Effect` trailer on the branch, one per commit carrying it. */
const keysOnBranch = () =>
  git(repo, "log", "--format=%(trailers:key=Idem-Effect,valueonly)", "main")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");

const BAD_PATCH = {
  jobId: "bad-patch-1",
  agent: "writer",
  summary: "a patch that cannot apply",
  effects: [
    {
      kind: "git.patch",
      repo: "site",
      message: "fix nope",
      patch: "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-old\n+new\n",
    },
  ],
};

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  tmp = mkdtempSync(join(tmpdir(), "idem-console-"));
  shotsDir = process.env.IDEM_CONSOLE_SCREENSHOTS === "1" ? DOCS_SHOTS : join(tmp, "shots");
  ws = join(tmp, "ws");
  const demo = await idem(
    ["demo", "--dir", ws, "--jobs", "8", "--crashes", "0", "--seed", "5", "--timeout", "300"],
    { cwd: tmp, timeoutMs: 320_000 },
  );
  expect(demo.code, demo.stderr).toBe(0);
  repo = join(ws, "repos/site");
  // A dead run to act on: a patch that cannot apply is a conflict.
  writeFileSync(join(tmp, "bad.json"), JSON.stringify(BAD_PATCH));
  expect((await idem(["submit", join(tmp, "bad.json")], { cwd: ws })).code).toBe(0);
  expect((await idem(["interpreter", "--once"], { cwd: ws })).code).toBe(1);
  // The background audit every second: drift shows on the overview without anyone asking.
  const configFile = join(ws, "idem.config.json");
  const config = JSON.parse(readFileSync(configFile, "utf8"));
  config.console = { ...config.console, auditIntervalMs: 1000 };
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  main = await startConsoleChild([], ws);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});

afterAll(async () => {
  await browser?.close();
  await main?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const WITH_CHROMIUM = skipUnless(
  HAVE_CHROMIUM,
  `no chromium at ${CHROMIUM} (apt-get install chromium)`,
);

describe(
  "the console in a browser (skipped without chromium: apt-get install chromium)",
  WITH_CHROMIUM,
  () => {
    it("shows the counts of idem status on the overview, and updates them without a reload", async () => {
      const status = await idemJson<{
        outputs: number;
        deadLetters: number;
        runs: Record<string, number>;
        effects: Record<string, number>;
      }>(["status"], ws);
      await page.goto(`${main.url}/`);
      expect(await count(page, "outputs")).toBe(status.outputs);
      // One name for what waits for a person: dead runs and dead-lettered jobs, both dead letters.
      expect(await count(page, "deadLetters")).toBe(status.deadLetters + (status.runs.dead ?? 0));
      expect(await count(page, "deadLetters.runs")).toBe(status.runs.dead);
      expect(await count(page, "deadLetters.jobs")).toBe(status.deadLetters);
      for (const [s, n] of Object.entries(status.runs))
        expect(await count(page, `runs.${s}`)).toBe(n);
      for (const [s, n] of Object.entries(status.effects))
        expect(await count(page, `effects.${s}`)).toBe(n);
      expect(status.runs.dead).toBe(1);
      await expect(page.locator('[data-alert="dead-runs"]').count()).resolves.toBe(1);
      await page.locator('[data-testid="activity"] svg').waitFor();
      // The chart's minutes come from the journal's history: this console started after the demo
      // recorded and applied all of them, and its chart shows every one.
      const chart = page.locator('[data-testid="activity"]');
      const charted = async (what: "outputs" | "applied") =>
        Number(await chart.getAttribute(`data-${what}`));
      expect(status.outputs).toBeGreaterThan(0);
      expect(status.effects.applied).toBeGreaterThan(0);
      expect(await charted("outputs")).toBe(status.outputs);
      expect(await charted("applied")).toBe(status.effects.applied);

      // Live: a new output recorded by the CLI shows on the open page, no reload.
      const marker = await page.evaluate(() => {
        (globalThis as unknown as { marker: number }).marker = 42;
        return 42;
      });
      const extra = { jobId: "live-1", agent: "writer", effects: [] };
      writeFileSync(join(tmp, "live.json"), JSON.stringify(extra));
      expect((await idem(["submit", join(tmp, "live.json")], { cwd: ws })).code).toBe(0);
      await until(
        "the overview to show the new output",
        async () => (await count(page, "outputs")) === status.outputs + 1,
      );
      await until(
        "the chart to count the new output",
        async () => (await charted("outputs")) === status.outputs + 1,
      );
      expect(await page.evaluate(() => (globalThis as unknown as { marker: number }).marker)).toBe(
        marker,
      );
    });

    it("lists outputs and shows an output's effects, their detail and its timeline", async () => {
      await page.goto(`${main.url}/outputs`);
      const listed = await idemJson<unknown[]>(["ls"], ws);
      const rows = await page.locator("tr[data-job]").count();
      expect(rows).toBe(listed.length);
      // Newest first: the last output recorded leads.
      const order = (await idemJson<{ jobId: string }[]>(["ls"], ws)).map((o) => o.jobId);
      expect(await page.locator("tr[data-job]").first().getAttribute("data-job")).toBe(
        order[order.length - 1],
      );
      await shot(page, "outputs");
      await page.goto(`${main.url}/outputs?agent=writer`);
      for (const a of await page.locator("tr[data-job] td:nth-child(2)").allInnerTexts())
        expect(a).toBe("writer");

      const jobs = await idemJson<{ jobId: string }[]>(["ls"], ws);
      const jobId = jobs.find((j) => j.jobId.startsWith("demo-"))?.jobId ?? "demo-001-writer";
      const view = await idemJson<{
        effects: {
          key: string;
          generation: number;
          state: string;
          detail: Record<string, unknown> | null;
        }[];
        events: unknown[];
      }>(["show", jobId], ws);
      await page.goto(`${main.url}/outputs/${jobId}`);
      for (const e of view.effects) {
        const row = page
          .locator(`section, .scroll`)
          .filter({ hasText: `Generation ${e.generation}` })
          .locator(`tr[data-key="${e.key}"]`);
        await expect(row.locator(".badge").textContent()).resolves.toBe(e.state);
        const commit = e.detail?.commit;
        if (typeof commit === "string")
          await expect(row.locator(`code[title="${commit}"]`).count()).resolves.toBe(1);
      }
      expect(await page.locator('[data-testid="timeline"] li').count()).toBe(view.events.length);
      // Readable: fields by name, no raw JSON, process IDs short (the whole one in the title).
      const timeline = (await page.locator('[data-testid="timeline"]').textContent()) ?? "";
      expect(timeline).not.toContain('{"');
      expect(timeline).not.toMatch(/@[0-9a-f-]{36}\//);
      expect(timeline).toMatch(/generation 1/);
      const actor = page.locator('[data-testid="timeline"] .by code[title*="@"]').first();
      expect(await actor.getAttribute("title")).toMatch(/^.+:\d+:[0-9a-f]{8}@/);
      await shot(page, "output");
    });

    it("resolves a dead run from the page with a reason, as idem dlq resolve records it", async () => {
      // A replay by effect leaves a dead output alone, on the page as in the CLI's plan.
      const planned = await idemJson<{ dead: string[] }>(
        ["replay", "--job", "bad-patch-1", "--repo", "site", "--dry-run"],
        ws,
      );
      expect(planned.dead).toEqual(["bad-patch-1"]);
      await page.goto(`${main.url}/replay?jobs=bad-patch-1&repo=site`);
      await expect(page.locator('[data-testid="dead"]').textContent()).resolves.toContain(
        "bad-patch-1",
      );
      expect(await page.locator('[data-testid="confirm"]').count()).toBe(0);

      await page.goto(`${main.url}/dead-letters`);
      const card = page.locator('article[data-job="bad-patch-1"]');
      await expect(card.textContent()).resolves.toContain("conflict");
      // A conflict is not cured by trying again: the page says what to look at, Resolve comes
      // first and Retry is the plain, secondary button.
      expect(await card.locator('[data-testid="retry-repeats"]').count()).toBe(1);
      const buttons = await card.locator("form button").allTextContents();
      expect(buttons[0]).toBe("Resolve");
      expect(await card.getByRole("button", { name: /Retry/ }).getAttribute("class")).toContain(
        "secondary",
      );
      await shot(page, "dead-letters");
      // The keyboard alone: a radio, the reason, Enter submits.
      await card.getByLabel(/skipped/).focus();
      await page.keyboard.press("Space");
      await card.getByLabel(/Reason/).focus();
      await page.keyboard.type("the patch was for a file removed on purpose");
      await page.keyboard.press("Enter");
      await page.waitForURL(/\/dead-letters\?done=/);
      await expect(page.locator(".flash.ok").textContent()).resolves.toContain(
        "bad-patch-1/0: skipped",
      );
      const dlq = await idemJson<{ runs: unknown[] }>(["dlq", "ls"], ws);
      expect(dlq.runs).toEqual([]);
      const shown = await idemJson<{
        effects: { key: string; state: string; detail: Record<string, unknown> }[];
      }>(["show", "bad-patch-1"], ws);
      const settled = shown.effects.find((e) => e.key === "bad-patch-1/0" && e.state === "skipped");
      expect(JSON.stringify(settled?.detail)).toContain(
        "the patch was for a file removed on purpose",
      );
      const drained = await idem(["interpreter", "--once"], { cwd: ws });
      expect(drained.code, drained.stdout + drained.stderr).toBe(0);
    });

    it("plans a replay of a rolled-back repository as idem replay --dry-run does, and restores it with each key once", async () => {
      const before = keysOnBranch();
      expect(new Set(before).size).toBe(before.length);
      git(repo, "reset", "-q", "--hard", "HEAD~3");
      const lost = before.length - keysOnBranch().length;
      expect(lost).toBeGreaterThan(0);
      // Nobody asks for an audit: the background audit finds the drift, the overview says so.
      await page.goto(`${main.url}/`);
      await until(
        "the overview to show the drift the background audit found",
        async () => (await page.locator('[data-alert="drift"]').count()) === 1,
      );
      await expect(page.locator('[data-alert="drift"]').textContent()).resolves.toContain(
        "background audit",
      );
      await shot(page, "overview-drift");
      type Plan = {
        plan: { key: string; jobId: string; action: string; reason: string }[];
        summary: Record<string, number>;
        kept: { key: string }[];
      };
      // The demo's outputs (not the dead-run fixture, whose patch can never apply).
      const demoJobs = (await idemJson<{ jobId: string }[]>(["ls"], ws))
        .map((o) => o.jobId)
        .filter((j) => j.startsWith("demo-"));
      expect(demoJobs.length).toBe(8);
      // Only the repository that was restored: the outbox's files are kept as they are.
      const cli = await idemJson<Plan>(
        ["replay", "--job", ...demoJobs, "--repo", "site", "--dry-run"],
        ws,
      );
      expect(cli.kept.length).toBeGreaterThan(0);
      expect(cli.summary.apply).toBe(lost);

      await page.goto(`${main.url}/replay`);
      await page.getByLabel("Jobs").fill(demoJobs.join(" "));
      await page.getByRole("group", { name: "repo" }).getByLabel("site").check();
      await page.getByRole("button", { name: "Plan (dry run)" }).click();
      await page.locator('[data-testid="plan"]').waitFor();
      const rows = await page.locator("tr[data-key]").evaluateAll((trs) =>
        trs.map((tr) => ({
          key: tr.getAttribute("data-key"),
          action: tr.getAttribute("data-action"),
          reason: tr.lastElementChild?.textContent ?? "",
        })),
      );
      // Every row of the CLI's plan, leading with what will change; the skips come last, folded.
      const changesFirst = [
        ...cli.plan.filter((e) => e.action !== "skip"),
        ...cli.plan.filter((e) => e.action === "skip"),
      ];
      expect(rows).toEqual(
        changesFirst.map(({ key, action, reason }) => ({ key, action, reason })),
      );
      expect(await page.locator('[data-testid="skips"]').getAttribute("open")).toBeNull();
      // The button counts only the outputs whose generation changes something.
      const changing = new Set(cli.plan.filter((e) => e.action !== "skip").map((e) => e.jobId));
      expect(changing.size).toBeLessThan(demoJobs.length);
      await expect(
        page.getByRole("button", { name: /new generation/ }).textContent(),
      ).resolves.toBe(`Create ${changing.size} new generation(s)`);
      // The page's JSON is the CLI's document, whole.
      const pageJson = await page.evaluate(async (jobs) => {
        const r = await fetch(`/replay?jobs=${encodeURIComponent(jobs)}&repo=site&format=json`);
        return r.json();
      }, demoJobs.join(" "));
      expect(pageJson).toEqual(cli);
      for (const a of ["apply", "skip", "conflict", "uncertain"])
        expect(await count(page, `summary.${a}`)).toBe(cli.summary[a]);
      expect(await page.locator("tr[data-kept]").count()).toBe(cli.kept.length);
      await shot(page, "replay-plan");

      await page.getByLabel(/Reason/).fill("site restored from an old backup");
      await page.getByRole("button", { name: /new generation/ }).click();
      await page.waitForURL(/\/replay\/runs\//);
      expect(await page.locator("[data-run]").count()).toBe(changing.size);
      // No interpreter runs: the page says so, and how to start one, rather than wait silently.
      await until(
        "the progress page to warn that no interpreter runs",
        async () => (await page.locator('[data-testid="no-interpreter"]').count()) === 1,
        120_000,
      );
      await expect(page.locator('[data-testid="no-interpreter"]').textContent()).resolves.toContain(
        "idem interpreter",
      );
      await shot(page, "replay-progress-pending");
      const drained = await idem(["interpreter", "--once"], { cwd: ws });
      expect(drained.code, drained.stdout + drained.stderr).toBe(0);
      // The progress page follows the runs without a reload.
      await until(
        "the progress page to show every run interpreted",
        async () =>
          (await page.locator('[data-testid="progress"]').getAttribute("data-remaining")) === "0",
      );
      await shot(page, "replay-progress");
      expect(await page.locator('[data-testid="no-interpreter"]').count()).toBe(0);
      // The output's page shows the lineage of its new generation: who, why, which it replays.
      const replayed = cli.plan.find((e) => e.action === "apply");
      if (!replayed) throw new Error("no apply in the plan");
      const shown = await idemJson<{
        lineage: { generation: number; actor: string; reason: string; replaysGeneration: number }[];
      }>(["show", replayed.jobId], ws);
      const lineage = shown.lineage[shown.lineage.length - 1];
      expect(lineage?.reason).toBe("site restored from an old backup");
      await page.goto(`${main.url}/outputs/${replayed.jobId}`);
      const cell = page.locator(`[data-testid="lineage-${lineage?.generation}"]`);
      await expect(cell.textContent()).resolves.toContain("site restored from an old backup");
      await expect(cell.textContent()).resolves.toContain(
        `replays generation ${lineage?.replaysGeneration}, by ${lineage?.actor}`,
      );
      await expect(cell.textContent()).resolves.toContain("effects repo site");
      await shot(page, "output-lineage");
      const after = keysOnBranch();
      expect(new Set(after).size).toBe(after.length);
      expect(new Set(after)).toEqual(new Set(before));
    });

    it("shows the audit, clean after the replay, and the overview's activity", async () => {
      await page.goto(`${main.url}/audit`);
      await expect(page.locator('[data-testid="verdict"]').textContent()).resolves.toContain(
        "Clean",
      );
      const report = await idemJson<{ outputs: number }>(["audit"], ws);
      expect(await count(page, "outputs recorded")).toBe(report.outputs);
      await shot(page, "audit");
      // The overview after the replay's work (its chart reads the journal's minutes).
      await page.goto(`${main.url}/`);
      await page.locator('[data-testid="activity"] svg').waitFor();
      await shot(page, "overview");
      const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await phone.goto(`${main.url}/`);
      await shot(phone, "overview-phone");
      await phone.close();
    });

    it("read-only: shows no action and refuses a forged POST", async () => {
      const ro = await startConsoleChild(["--read-only"], ws);
      try {
        const p = await browser.newPage({ viewport: { width: 1280, height: 800 } });
        await p.goto(`${ro.url}/replay?all=on`);
        await p.locator('[data-testid="plan"]').waitFor();
        expect(await p.locator('[data-testid="confirm"]').count()).toBe(0);
        await expect(p.locator('[data-testid="read-only"]').count()).resolves.toBe(1);
        await shot(p, "read-only");
        await p.goto(`${ro.url}/dead-letters`);
        expect(await p.locator("form[data-action]").count()).toBe(0);
        const forged = await p.evaluate(async () => {
          const body = new URLSearchParams({ job: "bad-patch-1", actor: "mallory" });
          const r = await fetch("/dead-letters/retry", { method: "POST", body });
          return { status: r.status, text: await r.text() };
        });
        expect(forged.status).toBe(403);
        expect(forged.text).toContain("read-only");
        const replay = await fetch(`${ro.url}/replay`, {
          method: "POST",
          body: new URLSearchParams({ all: "on", reason: "x", actor: "mallory" }),
        });
        expect(replay.status).toBe(403);
        await p.close();
      } finally {
        await ro.stop();
      }
    });

    it("with api.token: refuses a request without it, signs a person in with an HttpOnly SameSite cookie, takes a bearer token", async () => {
      const config = JSON.parse(readFileSync(join(ws, "idem.config.json"), "utf8"));
      config.api = { ...config.api, token: "s3cret-console-token" };
      writeFileSync(join(ws, "token.config.json"), JSON.stringify(config));
      const sec = await startConsoleChild(["--config", join(ws, "token.config.json")], ws);
      try {
        for (const path of [
          "/",
          "/outputs",
          "/dead-letters",
          "/replay?all=on",
          "/audit",
          "/?format=json",
        ]) {
          const r = await fetch(`${sec.url}${path}`, { headers: { accept: "application/json" } });
          expect(r.status, path).toBe(401);
        }
        const post = await fetch(`${sec.url}/dead-letters/retry`, {
          method: "POST",
          body: new URLSearchParams({ job: "x", actor: "y" }),
        });
        expect(post.status).toBe(401);
        const bearer = await fetch(`${sec.url}/?format=json`, {
          headers: { authorization: "Bearer s3cret-console-token" },
        });
        expect(bearer.status).toBe(200);

        const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const p = await ctx.newPage();
        const first = await p.goto(`${sec.url}/outputs`);
        expect(first?.status()).toBe(401);
        await expect(p.locator("main").textContent()).resolves.toContain(
          "api.token in the config file it runs with (idem.config.json",
        );
        await shot(p, "sign-in");
        await p.getByLabel("Token").fill("wrong");
        await p.keyboard.press("Enter");
        await expect(p.locator(".flash.err").textContent()).resolves.toContain("wrong token");
        await p.getByLabel("Token").fill("s3cret-console-token");
        await p.keyboard.press("Enter");
        await p.waitForURL(`${sec.url}/outputs`);
        expect(await p.locator("tr[data-job]").count()).toBeGreaterThan(0);
        const cookie = (await ctx.cookies()).find((c) => c.name === "idem_console_session");
        expect(cookie?.httpOnly).toBe(true);
        expect(cookie?.sameSite).toBe("Strict");
        expect(cookie?.value).not.toContain("s3cret");
        // Signed in, a POST without the form's CSRF token is still refused.
        const noCsrf = await p.evaluate(async () => {
          const r = await fetch("/dead-letters/retry", {
            method: "POST",
            body: new URLSearchParams({ job: "bad-patch-1", actor: "mallory" }),
          });
          return r.status;
        });
        expect(noCsrf).toBe(403);
        // The session ends 12 hours after sign-in (docs/console.md), and at once on sign-out:
        // revoked server-side, the cookie a copy kept opens nothing.
        const hours = ((cookie?.expires ?? 0) - Date.now() / 1000) / 3600;
        expect(hours).toBeGreaterThan(11.5);
        expect(hours).toBeLessThan(12.5);
        await p.getByRole("button", { name: "Sign out" }).click();
        await p.waitForURL(`${sec.url}/sign-in`);
        const replayed = await fetch(`${sec.url}/?format=json`, {
          headers: { cookie: `idem_console_session=${cookie?.value}` },
        });
        expect(replayed.status).toBe(401);
        await ctx.close();
      } finally {
        await sec.stop();
      }
    });
  },
);
