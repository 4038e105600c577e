import { Extension } from "@abhed/extension"

// The SDK's no-op: every event answered `{}` by `Extension.main` with no handlers, to price the SDK itself.
Extension.main({})
