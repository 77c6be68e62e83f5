// Approval gates in the console, driven in a real browser (Debian's chromium through
// playwright-core): a rule on github.pull_request to base main; the outputs are recorded and
// nothing is applied; the console shows each pull request as it will be opened; approved there, the
// pull request exists once on the GitHub stand-in; rejected there, it never does, and `idem show`
// names the reason and the operator. Needs the build (`npm run build`).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { type GitHubStandIn, startGitHubStandIn } from "@idem/testing";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipUnless } from "../../../test/support/skip.js";
import { type ConsoleChild, idem, idemJson, startConsoleChild } from "./harness.js";

const CHROMIUM = process.env.IDEM_CHROMIUM ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);

let tmp: string;
let gh: GitHubStandIn;
let consoleChild: ConsoleChild;
let browser: Browser;

const pr = (jobId: string, head: string) => ({
  jobId,
  agent: "writer",
  summary: `open ${head}`,
  effects: [
    {
      kind: "github.pull_request",
      repo: "app",
      title: `Release ${head}`,
      body: `Ships ${head}.\nSecond line of the body.`,
      head,
      base: "main",
    },
  ],
});

async function submit(output: ReturnType<typeof pr>): Promise<void> {
  const file = join(tmp, `${output.jobId}.json`);
  writeFileSync(file, JSON.stringify(output));
  const r = await idem(["submit", file], { cwd: tmp });
  expect(r.code, r.stderr).toBe(0);
}

const interpretOnce = async () => {
  const r = await idem(["interpreter", "--once"], { cwd: tmp });
  expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
};

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  tmp = mkdtempSync(join(tmpdir(), "idem-console-approvals-"));
  gh = await startGitHubStandIn();
  gh.createRepo({ owner: "acme", name: "app", branches: ["main", "release-1", "release-2"] });
  // The children (CLI, console) read the token from the environment the config names.
  process.env.IDEM_TEST_GH_TOKEN = gh.token;
  const config = {
    journal: { path: "journal.db" },
    github: {
      baseUrl: gh.url,
      tokenEnv: "IDEM_TEST_GH_TOKEN",
      repos: { app: { owner: "acme", name: "app" } },
    },
    approvals: {
      rules: [{ name: "prs-to-main", kind: "github.pull_request", match: { base: "main" } }],
    },
  };
  writeFileSync(join(tmp, "idem.config.json"), JSON.stringify(config, null, 2));
  await (await openSqliteJournal(join(tmp, "journal.db"))).close();
  consoleChild = await startConsoleChild([], tmp);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
});

afterAll(async () => {
  await browser?.close();
  await consoleChild?.stop();
  await gh?.[Symbol.asyncDispose]();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const WITH_CHROMIUM = skipUnless(
  HAVE_CHROMIUM,
  `no chromium at ${CHROMIUM} (apt-get install chromium)`,
);

describe("approvals in the console (skipped without chromium)", WITH_CHROMIUM, () => {
  it("shows the pull request as it will be opened; approved it exists once, rejected never", async () => {
    await submit(pr("pr-ok", "release-1"));
    await submit(pr("pr-no", "release-2"));
    await interpretOnce();
    // Recorded, nothing applied: both wait for a person.
    expect(gh.pullRequests("acme", "app")).toEqual([]);
    const status = await idemJson<{ runs: { awaiting: number } }>(["status"], tmp);
    expect(status.runs.awaiting).toBe(2);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${consoleChild.url}/`);
    expect(await page.locator('[data-k="approvals.awaiting"]').textContent()).toBe("2");
    await page.goto(`${consoleChild.url}/approvals`);
    const ok = page.locator('article[data-job="pr-ok"]');
    expect(await ok.locator('[data-testid="describe"]').textContent()).toBe(
      'app: pull request "Release release-1" release-1 -> main',
    );
    expect(await ok.locator('[data-field="title"]').textContent()).toBe("Release release-1");
    expect(await ok.locator('[data-field="body"]').textContent()).toBe(
      "Ships release-1.\nSecond line of the body.",
    );
    expect(await ok.locator('[data-field="base"]').textContent()).toBe("main");
    // The signed-in operator is named in the form (the console's actor), and may be changed.
    const approveForm = ok.locator('form[data-action="approve"]');
    expect(await approveForm.locator('input[name="actor"]').inputValue()).toBe("oncall (console)");
    await approveForm.locator('input[name="reason"]').fill("release notes checked");
    await approveForm.locator('button[type="submit"]').click();
    await page.waitForURL(/\/approvals\?done=/);
    expect(await page.locator('article[data-job="pr-ok"]').count()).toBe(0);

    const rejectForm = page.locator('article[data-job="pr-no"] form[data-action="reject"]');
    await rejectForm.locator('input[name="reason"]').fill("not this week");
    await rejectForm.locator('button[type="submit"]').click();
    await page.waitForURL(/\/approvals\?done=/);
    expect(await page.locator("article.awaiting").count()).toBe(0);

    // A form without the session's CSRF token is refused, nothing decided.
    const forged = await page.request.post(`${consoleChild.url}/approvals/approve`, {
      form: { job: "pr-ok", reason: "forged", actor: "mallory", effect: "0" },
    });
    expect(forged.status()).toBe(403);

    await interpretOnce();
    await interpretOnce();
    const opened = gh.pullRequests("acme", "app");
    expect(opened.map((p) => [p.title, p.head, p.base])).toEqual([
      ["Release release-1", "release-1", "main"],
    ]);
    const shown = await idemJson<{
      runs: { state: string; class: string | null }[];
      approvals: { step: string; actor: string; reason: string | null }[];
    }>(["show", "pr-no"], tmp);
    expect(shown.runs.at(-1)).toMatchObject({ state: "dead", class: "rejected" });
    expect(shown.approvals.at(-1)).toMatchObject({
      step: "rejected",
      actor: "oncall (console)",
      reason: "not this week",
    });
    await page.close();
  });
});
