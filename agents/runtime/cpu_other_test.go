//go:build !unix

package runtime

import "time"

// processCPU is not read outside Unix.
func processCPU() time.Duration { return 0 }
