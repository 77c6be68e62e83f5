// GitHub's answers may quote the token back (an error body echoing the request, a token of
// another request pasted in an issue's validation message): what the github.* kinds say of a
// failure never holds it, whether the token was this request's or only shaped as GitHub's.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { openKind } from "@idem/kit";
import { afterEach, describe, expect, it } from "vitest";
import { githubFailure, githubMessage } from "../../src/clients/github/github-failure.js";
import { githubIssueKind } from "../../src/kinds/github-issue/github-issue-kind.js";
import { expectIdemError, rejection } from "./kind-calls.js";

const SENT = "sekret-token-of-this-process-1234";
const OTHER = `ghp_${"A1b2C3d4".repeat(5)}`;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

describe("what the github.* kinds say of a failed answer", () => {
  it("takes out the token sent and any GitHub-shaped token, even past the 300th character", () => {
    const body = {
      message: `${"x".repeat(290)} Bearer ${SENT}`,
      errors: [{ field: "title", code: "invalid", message: `quoted ${OTHER}` }],
    };
    const said = githubMessage(body, [`Bearer ${SENT}`]);
    expect(said).not.toContain(SENT.slice(0, 4));
    const e = githubFailure(
      { status: 422, headers: new Headers(), body, sent: [`Bearer ${SENT}`] },
      "create an issue on acme/app",
      0,
    );
    expectIdemError(e, "INVALID_INPUT");
    expect(e.message).not.toContain(SENT);
    expect(e.message).not.toContain(OTHER);
    expect(e.message).not.toContain(OTHER.slice(0, 12));
  });

  it("never names the token a real answer echoes back", async () => {
    server = createServer((req, res) => {
      const auth = req.headers.authorization ?? "";
      const body = req.url?.startsWith("/user")
        ? { message: `Bad credentials: ${auth}` }
        : { message: "Not Found" };
      res.writeHead(req.url?.startsWith("/user") ? 401 : 404, {
        "content-type": "application/json",
      });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const k = openKind(githubIssueKind, {
      options: {
        baseUrl: `http://127.0.0.1:${port}`,
        tokenEnv: "T",
        login: "idem-bot",
        repos: { app: { owner: "acme", name: "app" } },
      },
      env: { T: SENT },
    });
    const e = await rejection(
      k.probe(k.check({ kind: "github.issue", repo: "app", title: "t" }), "job-1/0"),
    );
    expectIdemError(e, "INVALID_CONFIG");
    expect((e as Error).message).toContain("Bad credentials");
    expect(
      JSON.stringify({ m: (e as Error).message, d: (e as { details?: unknown }).details }),
    ).not.toContain(SENT);
    await k.close();
  });
});
