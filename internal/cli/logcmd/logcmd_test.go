package logcmd

import (
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/cli/progress"
)

func TestShortVia(t *testing.T) {
	for _, tt := range []struct{ via, url, want string }{
		{"http://a.test/x?q=1", "http://a.test/y", "/x?q=1"},
		{"http://a.test", "http://A.TEST/y", "/"},
		{"https://a.test/x", "http://a.test/y", "a.test/x"},
		{"http://b.test/x", "http://a.test/y", "b.test/x"},
		{"not a url %", "http://a.test/", "not a url %"},
	} {
		if got := shortVia(tt.via, tt.url); got != tt.want {
			t.Errorf("shortVia(%q, %q) = %q, want %q", tt.via, tt.url, got, tt.want)
		}
	}
}

// TestRowFit: on a terminal a row is cut to its width, the URL's end
// first.
func TestRowFit(t *testing.T) {
	e := crawllog.Entry{Time: time.Date(2026, 12, 2, 3, 4, 12, 0, time.UTC), Job: 1, URL: "http://a.test/cal/2026/12", Depth: 5,
		Via: "http://a.test/cal/2026/11", Dropped: crawllog.DropTrap, Detail: "shape run > 3"}
	row := fitRow(Row(&e), func() int { return 80 })
	if progress.Width(row) != 80 || !strings.HasSuffix(row, progress.Ellipsis) || !strings.Contains(row, "drop:trap") {
		t.Errorf("row fitted to 80 columns: %q", row)
	}
	if whole := fitRow(Row(&e), func() int { return 0 }); !strings.HasSuffix(whole, "(shape run > 3)") {
		t.Errorf("row in a pipe: %q, want it whole", whole)
	}
}
