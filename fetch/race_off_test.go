//go:build !race

package fetch

// raceEnabled: see race_on_test.go.
const raceEnabled = false
