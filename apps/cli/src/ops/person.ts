import { userInfo } from "node:os";

/**
 * Who a person acting through the console is, for the actor its forms offer: `--actor`, then
 * `$IDEM_ACTOR`, then `$USER`, then the OS user this process runs as (a service or a container
 * often has no `$USER`), else "unknown". Never throws.
 */
export function personOf(option: string | undefined): string {
  const named = option ?? process.env.IDEM_ACTOR ?? process.env.USER;
  if (named !== undefined && named.trim() !== "") return named;
  try {
    const name = userInfo().username;
    if (name.trim() !== "") return name;
  } catch {
    // no passwd entry for this uid (a container's arbitrary uid)
  }
  return "unknown";
}
