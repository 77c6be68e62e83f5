// What an entry point sets to run right before the process's first kind module import (the CLI's
// module resolution hooks): a subpath of its own (`@idem/core/kind-imports`), so setting it loads
// neither the core nor the kinds.
export { beforeFirstKindImport } from "@idem/effects/kind-imports";
