//go:build race

package projections

// raceEnabled is true when the race detector is on; it slows Pebble so much
// that the scale test folds fewer keys.
const raceEnabled = true
