package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBenchDedupArgs: bench dedup takes no arguments, only flags.
func TestBenchDedupArgs(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "dedup", "extra"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "unexpected arguments") {
		t.Errorf("bench dedup extra: exit %d, stderr %q; want 2 and unexpected arguments", code, errb.String())
	}
}
