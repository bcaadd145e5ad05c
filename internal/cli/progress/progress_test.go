package progress

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trawl-crawler/trawl/internal/testkit/golden"
	"github.com/trawl-crawler/trawl/job"
)

// snapshots are the progress states the golden files render.
var snapshots = []struct {
	name      string
	prev, cur job.Progress
}{
	{"start", job.Progress{}, job.Progress{}},
	{"busy", job.Progress{Elapsed: 71 * time.Second, Pages: 1180},
		job.Progress{Elapsed: 72 * time.Second, Pages: 1234, PagesPerSecond: 17.14, Requests: 1456, Bytes: 45_230_000,
			Queued: 5678, InFlight: 12, Held: 3, Discovered: 7012, OutOfScope: 88, Dropped: 1,
			Hosts: 120, HostsReady: 33, HostsWaiting: 12, HostsBackoff: 3, RobotsDisallowed: 41,
			Status: map[string]int64{"2xx": 1200, "3xx": 20, "4xx": 14}, Errors: map[string]int64{"timeout": 3, "dns": 1}}},
	// A continuous job recrawling, before the schedule's first figures.
	{"recrawling", job.Progress{Elapsed: 3599 * time.Second, Pages: 2990},
		job.Progress{Elapsed: time.Hour, Pages: 3000, PagesPerSecond: 0.83, Requests: 3100, Bytes: 12_000_000,
			Queued: 4, InFlight: 1, Discovered: 1500, Hosts: 20, HostsReady: 1, HostsWaiting: 3,
			Status: map[string]int64{"2xx": 1700, "3xx": 1300}, Continuous: true, Recrawls: 1500, NotModified: 1290, Changed: 96}},
	// A continuous job with nothing queued, and the schedule's figures.
	{"waiting", job.Progress{Elapsed: 26 * time.Hour, Pages: 9000},
		job.Progress{Elapsed: 26*time.Hour + time.Second, Pages: 9000, PagesPerSecond: 0.1, Requests: 9400, Bytes: 80_000_000,
			Discovered: 1500, Hosts: 20, HostsWaiting: 0, Status: map[string]int64{"2xx": 5000, "3xx": 4000},
			Continuous: true, Recrawls: 7500, NotModified: 6100, Changed: 700,
			Freshness: &job.Freshness{Scheduled: 1500, Due: 0, Overdue: 0, Freshness: 0.9214, MeanAge: 3*time.Hour + 7*time.Minute + 12*time.Second}}},
	// A one-shot job whose hosts all wait: a robots.txt Retry-After.
	{"parked", job.Progress{Elapsed: 40 * time.Second, Pages: 12},
		job.Progress{Elapsed: 41 * time.Second, Pages: 12, PagesPerSecond: 0.29, Requests: 14, Bytes: 120_000,
			Queued: 3, Discovered: 15, Hosts: 2, HostsWaiting: 1, HostsBackoff: 1, Status: map[string]int64{"2xx": 12, "5xx": 1},
			Waiting: &job.Waiting{Seconds: 3540, Hosts: 1, Reason: "robots-retry-after", Why: "robots.txt Retry-After"}}},
	{"overdue", job.Progress{}, job.Progress{Elapsed: 40 * 24 * time.Hour, Pages: 90000, Queued: 700, Continuous: true,
		Recrawls: 88000, NotModified: 80000, Changed: 5000,
		Freshness: &job.Freshness{Scheduled: 1500, Due: 700, Overdue: 650, Freshness: 0.4, MeanAge: 12*24*time.Hour + 5*time.Hour + 29*time.Minute}}},
	// A crawl that met content duplicates: their line.
	{"duplicates", job.Progress{Elapsed: 9 * time.Second, Pages: 300},
		job.Progress{Elapsed: 10 * time.Second, Pages: 320, PagesPerSecond: 32, Requests: 330, Bytes: 9_000_000,
			Queued: 40, Discovered: 360, Hosts: 6, HostsReady: 4, Status: map[string]int64{"2xx": 320},
			Revisits: 17, NearDuplicates: 5}},
}

// TestBlockGolden renders each snapshot at widths from a wide terminal
// down to a narrow one.
func TestBlockGolden(t *testing.T) {
	var b strings.Builder
	for _, s := range snapshots {
		for _, w := range []int{200, 80, 40, 12} {
			fmt.Fprintf(&b, "== %s, width %d\n", s.name, w)
			for _, l := range Frame(Block(s.cur, s.prev), w) {
				fmt.Fprintf(&b, "%s|\n", l) // | marks the end of the line
			}
		}
	}
	for _, s := range snapshots {
		fmt.Fprintf(&b, "== %s, plain line\n%s\n", s.name, Line(s.cur))
	}
	golden.Check(t, "block.golden", b.String())
}

// TestAge: the mean age shown is as precise as its size calls for.
func TestAge(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{42*time.Second + 400*time.Millisecond, "42s"},
		{59*time.Minute + 59*time.Second, "59m59s"},
		{3*time.Hour + 7*time.Minute + 12*time.Second, "3h7m"},
		{5 * time.Hour, "5h0m"},
		{23*time.Hour + 59*time.Minute + 50*time.Second, "24h0m"},
		{24 * time.Hour, "1d0h"},
		{12*24*time.Hour + 5*time.Hour + 29*time.Minute, "12d5h"},
	} {
		if got := Age(c.d); got != c.want {
			t.Errorf("Age(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestFitGolden: cutting is by columns and between runes; wide characters
// count two columns, combining marks none, control characters are dropped.
func TestFitGolden(t *testing.T) {
	inputs := []string{
		"pages 1234 queued 5678",
		"crawl of 日本語のページ and more",
		"e\u0301te\u0301 cafe\u0301 (combining accents)",
		"emoji 🕷️🕸️ web",
		"escape \x1b[2J sequence\tand tab",
		"",
	}
	var b strings.Builder
	for _, in := range inputs {
		for _, w := range []int{0, 1, 2, 5, 8, 13, 40} {
			out := Fit(in, w)
			fmt.Fprintf(&b, "Fit(%q, %d) = %q (width %d)\n", in, w, out, Width(out))
		}
	}
	golden.Check(t, "fit.golden", b.String())
}

// TestRedrawGolden: the escape sequences of a first frame, a same-size
// redraw, a shorter one and a longer one.
func TestRedrawGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range []struct {
		prev  int
		lines []string
	}{{0, []string{"a", "b", "c"}}, {3, []string{"a2", "b2", "c2"}}, {3, []string{"one"}}, {1, []string{"x", "y"}}} {
		fmt.Fprintf(&b, "Redraw(%d, %q) = %q\n", c.prev, c.lines, Redraw(c.prev, c.lines))
	}
	golden.Check(t, "redraw.golden", b.String())
}

// TestFitNeverExceedsWidth is Fit's invariant over every width up to 200
// and every line the display draws, and some hostile text.
func TestFitNeverExceedsWidth(t *testing.T) {
	var lines []string
	for _, s := range snapshots {
		lines = append(lines, Block(s.cur, s.prev)...)
		lines = append(lines, Line(s.cur))
	}
	lines = append(lines, strings.Repeat("全", 150), strings.Repeat("a\u0301", 300), "\x1b[31mred\x1b[0m"+strings.Repeat("x", 250))
	for w := -1; w <= 200; w++ {
		for _, l := range lines {
			got := Fit(l, w)
			if Width(got) > max(w, 0) || !utf8.ValidString(got) || strings.ContainsRune(got, '\x1b') {
				t.Fatalf("Fit(%q, %d) = %q: width %d, valid UTF-8 %v", l, w, got, Width(got), utf8.ValidString(got))
			}
			if Width(l) <= w && !strings.ContainsRune(l, '\x1b') && got != l {
				t.Fatalf("Fit(%q, %d) = %q, want it unchanged: it fits", l, w, got)
			}
			if Fit(got, w) != got {
				t.Fatalf("Fit is not idempotent at width %d: %q then %q", w, got, Fit(got, w))
			}
		}
	}
}

// TestDisplay: frames go to the writer fitted to one column less than the
// terminal (so none wraps), Close ends the block with a newline, and a
// terminal whose width is unknown counts as 80 columns.
func TestDisplay(t *testing.T) {
	var out bytes.Buffer
	width := 10
	d := NewDisplay(&out, func() int { return width })
	d.Draw([]string{"0123456789abc", "short"})
	width = 0
	d.Draw([]string{strings.Repeat("y", 100)})
	d.Close()
	d.Close()
	want := Redraw(0, []string{"01234567" + Ellipsis, "short"}) + Redraw(2, []string{strings.Repeat("y", 78) + Ellipsis}) + "\n"
	if out.String() != want {
		t.Errorf("Display wrote %q, want %q", out.String(), want)
	}
	if _, ok := Terminal(&out); ok {
		t.Error("Terminal(a buffer) = true")
	}
}
