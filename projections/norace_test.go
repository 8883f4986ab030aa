//go:build !race

package projections

const raceEnabled = false
