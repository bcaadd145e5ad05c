package clientcmd

import (
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
)

// TestPrintRecrawls: the recrawl lines of `trawl crawls stats`.
func TestPrintRecrawls(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		st   apiclient.Stats
		want string
	}{
		{apiclient.Stats{}, ""},
		{apiclient.Stats{Recrawls: 3, NotModified: 2}, "  recrawls    3: 2 not modified (304), 0 changed\n"},
		{apiclient.Stats{Continuous: true, WaitingForRecrawls: true, Recrawls: 10, NotModified: 6, Changed: 3,
			Freshness: &apiclient.Freshness{At: at, Scheduled: 50, Due: 0, Freshness: 0.96, MeanAgeS: 4000}},
			"  recrawls    10: 6 not modified (304), 3 changed; waiting for recrawls\n" +
				"  freshness   96.0%, mean age 1h7m; 50 scheduled, 0 due, 0 overdue (as of 2026-12-01T10:00:00Z)\n"},
	} {
		var b strings.Builder
		PrintRecrawls(&b, c.st)
		if b.String() != c.want {
			t.Errorf("PrintRecrawls(%+v) = %q, want %q", c.st, b.String(), c.want)
		}
	}
}
