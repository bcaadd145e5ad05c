//go:build race

package fetch

// raceEnabled: under the race detector sync.Pool drops what it is given
// at random, so a pooled decoder is often made afresh.
const raceEnabled = true
