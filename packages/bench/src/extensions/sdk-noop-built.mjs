// The SDK's no-op as a user runs it: `Extension.main({})` from the built @abhed/extension (dist/, plain JavaScript,
// as installed from the registry; `pnpm build` makes it), so neither Node's type stripping nor the workspace's
// source-first resolution is part of the price. Scenario 8 compares it with noop.mjs.
import { Extension } from "../../../extension/dist/index.js"

Extension.main({})
