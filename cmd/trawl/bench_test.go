package main

import (
	"flag"
	"io"
	"testing"

	"github.com/trawl-crawler/trawl/internal/bench/freshlive"
)

// TestFreshLiveNeverFlag: --never 0 means no page that never changes, not
// the Config's zero (its default of 30%).
func TestFreshLiveNeverFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 30},
		{[]string{"--never", "0"}, -1},
		{[]string{"--never", "45"}, 45},
	} {
		fs := flag.NewFlagSet("bench freshness-live", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var o freshlive.Options
		benchFreshLiveFlags(fs, &o)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if o.Never != c.want {
			t.Errorf("%v: Never %d, want %d", c.args, o.Never, c.want)
		}
	}
}
