package node

import "time"

// maxHookResponse is how long an operator has to answer a hook request
// it received (the reply permission nats-server grants per request); a
// project's hooks.timeout_ms is at most five minutes.
const maxHookResponse = 6 * time.Minute
