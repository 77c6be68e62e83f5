import { IdemError } from "@idem/schema";

/**
 * A hidden marker carrying an effect key in a text a target stores (an issue's body, a comment): an
 * HTML comment, which Markdown renderers do not show. The probe finds the effect by it.
 */
const MARKER = /<!--\s*idem-effect:\s*([A-Za-z0-9][A-Za-z0-9._:-]{0,127}\/\d{1,6})\s*-->/g;

/** The marker line for `key` (`<!-- idem-effect: job-1/0 -->`). */
export function keyMarker(key: string): string {
  return `<!-- idem-effect: ${key} -->`;
}

/** `text` with the key's marker appended on a line of its own (once, even if asked again). */
export function withKeyMarker(text: string, key: string): string {
  if (markedKeys(text).includes(key)) return text;
  return text.length === 0 ? keyMarker(key) : `${text}\n\n${keyMarker(key)}`;
}

/** Every effect key marked in `text`, in order. Pure; never throws on any input. */
export function markedKeys(text: string | null | undefined): string[] {
  if (typeof text !== "string") return [];
  return [...text.matchAll(MARKER)].map((m) => m[1] as string);
}

/** Whether `text` carries the marker of `key`. */
export function hasKeyMarker(text: string | null | undefined, key: string): boolean {
  return markedKeys(text).includes(key);
}

/**
 * Refuses agent text that carries a marker of its own: a marker for another effect's key would
 * make that effect's probe answer `present` and never apply it. `check` calls it on every text
 * that goes to the target.
 * @throws IdemError INVALID_INPUT naming `field`.
 */
export function refuseKeyMarkers(field: string, text: string | null | undefined): void {
  if (markedKeys(text).length > 0 || (typeof text === "string" && /idem-effect\s*:/i.test(text))) {
    throw new IdemError("INVALID_INPUT", `${field} may not carry an idem-effect marker`, {
      details: { field },
    });
  }
}
