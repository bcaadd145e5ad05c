//go:build race

package node

// raceEnabled: the race detector's shadow memory multiplies what the
// process holds, so memory bounds measured without it scale up.
const raceEnabled = true
