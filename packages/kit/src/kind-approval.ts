/**
 * A kind's part in approval gates (docs/approvals.md): the facts a rule's `match` may name (a pull
 * request's `base`, a statement's `statement`, a commit's `paths`), read from a spec, and whether
 * every effect of the kind needs an approval (`always`).
 */
export interface KindApproval<S> {
  /** The names `facts` answers: a rule naming another is refused when the config loads. */
  readonly facts: readonly string[];
  /** The facts of one spec, each a string or a list of strings (a commit's paths). Pure. */
  factsOf(spec: S): Readonly<Record<string, string | readonly string[]>>;
  /** Every effect of this kind waits for a person's approval, matched by a rule or not. */
  readonly always?: boolean;
}
