import { redactSecret, redactUrl } from "@idem/schema";

/** A part of a credential shorter than this is not searched for alone (it would match words). */
const MIN_PART = 4;

/**
 * The forms in which a target may repeat a credential a kind sent it: the value itself (a header's
 * whole value), the token after its scheme (`Bearer <token>`), a Basic credential's decoded
 * `user:password` and password, each also JSON-escaped and percent-encoded. Pure.
 */
export function sentForms(sent: readonly (string | undefined)[]): string[] {
  const forms = new Set<string>();
  const add = (v: string, min: number) => {
    if (v.length < min) return;
    forms.add(v);
    forms.add(JSON.stringify(v).slice(1, -1));
    forms.add(encodeURIComponent(v));
  };
  for (const value of sent) {
    if (typeof value !== "string" || value === "") continue;
    add(value, 1);
    const scheme = /^([A-Za-z][A-Za-z0-9._~+/-]*)\s+(\S.*)$/.exec(value);
    if (!scheme) continue;
    const token = scheme[2] as string;
    add(token, MIN_PART);
    if (scheme[1]?.toLowerCase() !== "basic") continue;
    const pair = Buffer.from(token, "base64").toString("utf8");
    const colon = pair.indexOf(":");
    if (colon < 0 || /[\x00-\x1f]/.test(pair)) continue;
    add(pair, MIN_PART);
    add(pair.slice(colon + 1), MIN_PART);
  }
  return [...forms];
}

/**
 * `text` with every credential this process sent (`sent`: header values, tokens, passwords) taken
 * out, in every form a target may repeat it in (`sentForms`), and every URL's credentials
 * (`redactUrl`): what a target answers (an error body echoing the request, a 401 quoting the
 * token) is hostile and may be stored, shown and logged, so a kind passes it through this before
 * it keeps or throws any of it. Pure; never throws.
 */
export function redactSent(text: string, sent: readonly (string | undefined)[]): string {
  return redactUrl(redactSecret(text, sentForms(sent)));
}
