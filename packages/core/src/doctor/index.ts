// Doctor: the checks of the config invariants, the journal, the targets and NATS.
export {};
