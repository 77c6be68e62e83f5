import { aliasOf, defineEffectKind } from "@idem/kit";
import { checkHeaders, checkingField } from "../../sandbox.js";
import { httpRequestDoctor } from "./http-request-doctor.js";
import {
  checkLookupSpec,
  createHttpRequestHandler,
  createsWithKey,
  type HttpRequester,
  requestUrl,
} from "./http-request-effect.js";
import { type HttpSection, HttpSectionSchema } from "./http-targets.js";
import { type HttpRequestSpec, HttpRequestSpecSchema } from "./spec.js";

/**
 * `http.request`: one request to a path under a configured target's base URL with the effect key
 * as `Idempotency-Key` (docs/kinds/http.md). A target that honours the key absorbs a repeat; one
 * with a `probeUrl` is probed (200 present, 404 absent), one with a `lookup` is asked for the key
 * it keeps as an external id (exactly once in effect); on any other, a crash after sending leaves
 * it `uncertain`. The kind's guarantee is that of its weakest target. Its options are the config's
 * `http` section.
 */
export const httpRequestKind = defineEffectKind<HttpRequestSpec, HttpSection, HttpRequester>({
  name: "http.request",
  description:
    "Sends one HTTP request to a path under a configured target's base URL, with the effect key as Idempotency-Key.",
  guarantee: "uncertain-window",
  spec: HttpRequestSpecSchema,
  configSection: "http",
  configSectionOptional: true,
  options: HttpSectionSchema,
  doctor: httpRequestDoctor,
  check(spec, ctx) {
    const t = aliasOf(ctx.options.targets, spec.target);
    if (!t) {
      ctx.issue("target", `unknown http target "${spec.target}"`);
      return;
    }
    checkingField("path", () => {
      requestUrl(t, spec.path);
      checkHeaders(spec.headers, false);
    });
    checkLookupSpec(spec, t);
  },
  aliases: (spec) => [{ type: "target", name: spec.target }],
  knownAliases: (ctx) => Object.keys(ctx.options.targets).map((name) => ({ type: "target", name })),
  describe: (spec) => `${spec.target}: ${spec.method} ${spec.path}`,
  probeable: (spec, ctx) => {
    const t = aliasOf(ctx.options.targets, spec.target);
    return (
      t !== undefined && (t.probeUrl !== null || (t.lookup !== undefined && createsWithKey(spec)))
    );
  },
  targetDedup: (spec, ctx) => aliasOf(ctx.options.targets, spec.target)?.idempotencyKeys === true,
  open: (ctx) => createHttpRequestHandler(ctx.options, ctx.fetch, (v) => ctx.env(v)),
  probe: (spec, call) => call.resource.probe(spec, call.key),
  apply: (spec, call) => call.resource.apply(spec, call.key, call.probed),
});
