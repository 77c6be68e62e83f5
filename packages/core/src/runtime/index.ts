// Process plumbing shared by the apps (retry/backoff, logger setup, metrics server, owner IDs).
export {};
