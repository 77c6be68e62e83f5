// The targets façade: the effect kinds of @idem/effects wired with the NATS transport of @idem/nats.
export {};
