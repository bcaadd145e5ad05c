// Package progress shows a crawl's progress as `trawl crawl` and `trawl
// demo` print it: on a terminal, a block of a few lines redrawn in place
// (Display), each line fitted to the terminal's width; elsewhere (a pipe,
// a file, a log), one plain line per interval (Line).
//
// Rendering is pure: Line, Block and Fit depend on their arguments only.
// Fit's invariant: its result is never wider than the width it is given,
// counted in terminal columns (a wide East Asian character takes two, a
// combining mark none), and it cuts between runes, never inside one. A
// Display writes to one writer and is not safe for concurrent use.
package progress

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"
	"golang.org/x/text/width"

	"github.com/trawl-crawler/trawl/job"
)

// Line is the plain progress line, printed once per interval when the
// output is not a terminal. Its form is stable: scripts read it. A
// continuous job's line goes on with its recrawl counts, the schedule's
// figures when it has some, and "waiting for recrawls" when nothing is
// queued. When nothing may be fetched, it says what the crawl waits for.
func Line(p job.Progress) string {
	l := fmt.Sprintf("%6.0fs  %d pages  %.1f pages/s  %d queued  hosts: %d active, %d waiting, %d backoff  errors: %s",
		p.Elapsed.Seconds(), p.Pages, p.PagesPerSecond, p.Queued,
		p.HostsReady+p.InFlight, p.HostsWaiting, p.HostsBackoff, Counts(p.Errors))
	if p.Waiting != nil {
		l += "  " + p.Waiting.String()
	}
	if !p.Continuous {
		return l
	}
	l += fmt.Sprintf("  recrawls: %d, 304: %d, changed: %d", p.Recrawls, p.NotModified, p.Changed)
	if f := p.Freshness; f != nil {
		l += fmt.Sprintf("  due: %d, overdue: %d, freshness: %s, mean age: %s", f.Due, f.Overdue, Percent(f.Freshness), Age(f.MeanAge))
	}
	if p.WaitingForRecrawls() {
		l += "  waiting for recrawls"
	}
	return l
}

// Block is the live display's lines for p, not yet fitted to a width,
// with a line of content duplicates once there are some and a continuous
// job's recrawl lines.
// prev is the snapshot drawn before (zero for the first): the rate "now"
// is the pages between the two over the time between them, while the
// other rate is the average since the start.
func Block(p, prev job.Progress) []string {
	now := ""
	if dt := p.Elapsed - prev.Elapsed; prev.Elapsed > 0 && dt > 0 {
		now = fmt.Sprintf("%.1f/s now, ", float64(p.Pages-prev.Pages)/dt.Seconds())
	}
	elapsed := p.Elapsed.Round(time.Second).String()
	if p.Elapsed >= 24*time.Hour { // a continuous crawl's days
		elapsed = Age(p.Elapsed)
	}
	lines := []string{
		fmt.Sprintf("%-7s %d pages (%s%.1f/s overall), %d requests, %s",
			elapsed, p.Pages, now, p.PagesPerSecond, p.Requests, Bytes(p.Bytes)),
		fmt.Sprintf("queue   %d queued, %d in flight, %d held, %d discovered, %d out of scope, %d dropped",
			p.Queued, p.InFlight, p.Held, p.Discovered, p.OutOfScope, p.Dropped),
		fmt.Sprintf("hosts   %d active, %d waiting, %d in backoff, %d known",
			p.HostsReady+p.InFlight, p.HostsWaiting, p.HostsBackoff, p.Hosts),
		fmt.Sprintf("answers %s; errors %s; robots.txt disallowed %d",
			Counts(p.Status), Counts(p.Errors), p.RobotsDisallowed),
	}
	if p.Waiting != nil {
		// Nothing may be fetched now: say what for, on a line of its own
		// so that a narrow terminal keeps it.
		lines = append(lines[:3], append([]string{p.Waiting.String()}, lines[3:]...)...)
	}
	if p.Revisits+p.NearDuplicates > 0 {
		lines = append(lines, dupLine(p))
	}
	return append(lines, recrawlLines(p)...)
}

// dupLine is the live display's line of content duplicates, shown once
// there are some: pages fetched whose content was archived already.
func dupLine(p job.Progress) string {
	return fmt.Sprintf("dups    %d exact (revisit records), %d near (archived in full)", p.Revisits, p.NearDuplicates)
}

// recrawlLines are a continuous job's lines of the live display: its
// recrawl counts (and whether it waits for the next), then the schedule's
// figures once it has some. None for another job.
func recrawlLines(p job.Progress) []string {
	if !p.Continuous {
		return nil
	}
	l := fmt.Sprintf("recrawl %d recrawls, %d not modified (304), %d changed", p.Recrawls, p.NotModified, p.Changed)
	if p.WaitingForRecrawls() {
		l += "; waiting for recrawls"
	}
	lines := []string{l}
	if f := p.Freshness; f != nil {
		lines = append(lines, fmt.Sprintf("fresh   %s fresh, mean age %s; %d due, %d overdue, %d scheduled",
			Percent(f.Freshness), Age(f.MeanAge), f.Due, f.Overdue, f.Scheduled))
	}
	return lines
}

// Percent is a share (0 to 1) as a percentage with one decimal.
func Percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// Age is a duration to the second under an hour, to the minute from an
// hour on, in days and hours from a day on: "42s", "3h7m", "12d5h".
func Age(d time.Duration) string {
	switch {
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 24*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("%dd%dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

// Counts is "k=v k=v" in key order, or "none".
func Counts(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

// Bytes is n in B, kB, MB or GB (powers of 1000, one decimal).
func Bytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1e6:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1e9:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}

// Ellipsis marks a line Fit cut.
const Ellipsis = "…"

// Fit returns s cut to at most w columns, ending in Ellipsis if it was
// cut. Tabs become spaces and other control characters (escape sequences
// would move the cursor) are dropped first. w < 1 gives "".
func Fit(s string, w int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	if w < 1 {
		return ""
	}
	if Width(s) <= w {
		return s
	}
	room := w - 1 // for the ellipsis
	used, end := 0, 0
	for i, r := range s {
		rw := RuneWidth(r)
		if used+rw > room {
			break
		}
		used += rw
		end = i + utf8.RuneLen(r)
	}
	return s[:end] + Ellipsis
}

// Width is the columns s takes on a terminal.
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += RuneWidth(r)
	}
	return n
}

// RuneWidth is the columns r takes on a terminal: 0 for control
// characters, combining marks and zero-width format characters; 2 for
// East Asian wide and full-width characters; 1 otherwise. (A symbol that a
// variation selector turns into a wide emoji counts as its base: 1. The
// display's own lines are ASCII; this only matters for text it is given.)
func RuneWidth(r rune) int {
	switch {
	case unicode.IsControl(r), unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// Frame fits every line to w columns.
func Frame(lines []string, w int) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = Fit(l, w)
	}
	return out
}

// Display redraws a block of lines in place on a terminal: each Draw moves
// the cursor back to the block's first line, rewrites every line (erasing
// what was there) and erases whatever the previous block had below. Lines
// are fitted to one column less than the terminal's width, so that none
// makes the terminal wrap (which would throw the count of lines to move
// up). A terminal made narrower between two draws may still show a stale
// line of the previous block.
type Display struct {
	w     io.Writer
	width func() int
	drawn int // lines of the block on screen
}

// NewDisplay returns a Display on w; width reports the terminal's width
// in columns when asked (0 or less: 80).
func NewDisplay(w io.Writer, width func() int) *Display {
	return &Display{w: w, width: width}
}

// Draw replaces the block on screen with lines.
func (d *Display) Draw(lines []string) error {
	w := d.width()
	if w <= 0 {
		w = 80
	}
	_, err := io.WriteString(d.w, Redraw(d.drawn, Frame(lines, w-1)))
	d.drawn = len(lines)
	return err
}

// Close ends the display: the cursor goes below the block, so that what
// is written next starts on a line of its own.
func (d *Display) Close() error {
	if d.drawn == 0 {
		return nil
	}
	d.drawn = 0
	_, err := io.WriteString(d.w, "\n")
	return err
}

// Redraw is the bytes that replace a block of prev lines, with the cursor
// at the end of its last line, by lines (already fitted), leaving the
// cursor at the end of the new block's last line: carriage return, cursor
// up prev-1 lines (CSI n A), then each line after an erase-line (CSI K),
// and finally erase-below (CSI J) for what the old block had under the
// new one.
func Redraw(prev int, lines []string) string {
	var b strings.Builder
	b.WriteByte('\r')
	if prev > 1 {
		fmt.Fprintf(&b, "\x1b[%dA", prev-1)
	}
	for i, l := range lines {
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("\x1b[K")
		b.WriteString(l)
	}
	b.WriteString("\x1b[J")
	return b.String()
}

// Terminal reports whether w is a terminal that can redraw in place (not
// TERM=dumb), and returns a function that asks its current width.
func Terminal(w io.Writer) (width func() int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile || !term.IsTerminal(int(f.Fd())) || os.Getenv("TERM") == "dumb" {
		return nil, false
	}
	return func() int {
		cols, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0
		}
		return cols
	}, true
}
