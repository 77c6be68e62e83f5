// The JetStream side of job delivery for the executor (consume, ack, nak, heartbeat, submit responder).
export {};
