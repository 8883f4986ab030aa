package main

import (
	"os"
	"runtime/debug"
)

// mcpGCPercent is the garbage collector's goal for `jido-bus mcp` when
// GOGC is not set. A stdio MCP server holds one project and a live heap
// of a few MB, while each tool call allocates a few hundred KB (most of
// it the MCP SDK's JSON handling): at Go's default of 100 the collector
// ran every few calls and took a fifth of a call's CPU. At 400, the peer
// benchmark (docs/performance.md) made 20–30% more calls a second with 8
// callers and spent 15–20% less CPU a call, for a heap a few MB larger.
// A node (serve) keeps Go's default: its heap is the agents'.
const mcpGCPercent = 400

// relaxGC sets mcpGCPercent unless the operator chose with GOGC.
func relaxGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(mcpGCPercent)
	}
}
