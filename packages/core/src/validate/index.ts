// Checks of what an output alone decides, before it is recorded (every surface and the executor).
export { checkRecordable } from "./check-recordable.js";
export { assertConfigInvariants } from "./config-invariants.js";
export { IDEM_KINDS, kindsOf, loadKinds, parseIdemConfig } from "./load-kinds.js";
