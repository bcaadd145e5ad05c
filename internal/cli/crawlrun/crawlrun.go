// Package crawlrun runs a crawl as `trawl crawl` and `trawl demo` do: one
// node with one job, its progress shown while it runs and its summary
// printed and written (DATA/summary.json) at the end.
//
// Invariants: the node is closed before the summary is taken, so the
// summary holds every fetch the crawl made; the progress display has
// stopped drawing before the summary is printed, so the two never
// interleave; a signal (ctx) ends the crawl as a normal stop, not an
// error.
package crawlrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/progress"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// Options configure Run.
type Options struct {
	// Node configures the node (checked by node.Open).
	Node node.Options
	// Spec is the one job's (checked by the node's Submit).
	Spec job.Spec
	// Progress is how often the progress is shown. Zero: every 0.5 s on a
	// terminal, redrawn in place; every 5 s otherwise, a line each.
	Progress time.Duration
}

// Run runs a node with one job, with progress on stderr and the summary
// on stdout, until the job ends or ctx is done (a signal; a continuous
// job ends no other way unless it fails). Its error is the crawl's
// (opening the node, the job, closing, writing the summary); nil when the
// crawl ended normally (exhausted, a limit, or a signal).
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	n, err := node.Open(o.Node)
	if err != nil {
		return err
	}
	j, err := n.Submit(o.Spec)
	if err != nil {
		n.Close()
		return err
	}
	n.Start()
	if o.Spec.Continuous {
		fmt.Fprintln(stderr, "trawl: a continuous crawl: it runs until Ctrl-C or SIGTERM, and the same command resumes it")
	}
	done := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		showProgress(n, j.ID, o.Progress, stderr, done)
	}()
	select {
	case <-j.Ended():
	case <-ctx.Done():
	}
	cerr := n.Close()
	close(done)
	<-progressDone
	sum := n.Summary(j.ID)
	werr := n.WriteSummary(sum)
	printSummary(stdout, sum, o.Node.DataDir)
	return errors.Join(j.Err(), cerr, werr)
}

// showProgress shows the job's progress on w until done is closed: on a
// terminal, a block of lines redrawn in place every interval (0.5s unless
// set) and fitted to the terminal's width; otherwise a plain line every
// interval (5s unless set).
func showProgress(n *node.Node, id job.ID, every time.Duration, w io.Writer, done <-chan struct{}) {
	width, live := progress.Terminal(w)
	if every == 0 {
		every = 5 * time.Second
		if live {
			every = 500 * time.Millisecond
		}
	}
	var d *progress.Display
	var prev job.Progress
	show := func() {
		p, _ := n.Progress(id)
		if d == nil {
			fmt.Fprintln(w, progress.Line(p))
			return
		}
		d.Draw(progress.Block(p, prev))
		prev = p
	}
	if live {
		d = progress.NewDisplay(w, width)
		defer d.Close()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			if live {
				show() // the last figures stay on screen
			}
			return
		case <-t.C:
			show()
		}
	}
}

// printSummary prints a crawl's summary, a few lines; its WARC files and
// summary.json are in dataDir. Nil prints nothing.
func printSummary(w io.Writer, s *node.Summary, dataDir string) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "crawl %s after %.1fs\n", s.StopReason, s.ElapsedSeconds)
	fmt.Fprintf(w, "  pages       %d (%.1f/s), %d requests incl. %d robots.txt, %.1f MB\n",
		s.Pages, s.PagesPerSecond, s.Requests, s.RobotsFetches, float64(s.Bytes)/1e6)
	fmt.Fprintf(w, "  status      %s\n", progress.Counts(s.Status))
	fmt.Fprintf(w, "  errors      %s\n", progress.Counts(s.Errors))
	fmt.Fprintf(w, "  discovered  %d URLs on %d hosts; %d still queued, %d dropped, %d disallowed by robots.txt, %d out of scope\n",
		s.Discovered, s.Hosts, s.Queued, s.Dropped, s.RobotsDisallowed, s.OutOfScope)
	if s.RobotsGaveUpOn > 0 {
		fmt.Fprintf(w, "  gave up     %d URLs on %d hosts whose robots.txt stayed unavailable (--robots-give-up)\n", s.RobotsGaveUp, s.RobotsGaveUpOn)
	}
	if s.WaitGaveUpOn > 0 {
		fmt.Fprintf(w, "  gave up     %d URLs on %d hosts that asked to wait past --max-wait (Retry-After, backoff, robots.txt outages)\n", s.WaitGaveUp, s.WaitGaveUpOn)
	}
	fmt.Fprintf(w, "  duplicates  %d exact (revisit records), %d near (archived in full)\n", s.Revisits, s.NearDuplicates)
	if s.Shared > 0 {
		fmt.Fprintf(w, "  shared      %d pages fetched once for another job too\n", s.Shared)
	}
	if s.Continuous || s.Recrawls > 0 {
		fmt.Fprintf(w, "  recrawls    %d: %d not modified (304), %d changed\n", s.Recrawls, s.NotModified, s.Changed)
	}
	if f := s.Freshness; f != nil {
		fmt.Fprintf(w, "  freshness   %s, mean age %s; %d scheduled, %d due, %d overdue\n",
			progress.Percent(f.Freshness), progress.Age(f.MeanAge), f.Scheduled, f.Due, f.Overdue)
	}
	fmt.Fprintf(w, "  warc        %d file(s) in %s\n", len(s.WARCFiles), dataDir)
	fmt.Fprintf(w, "  summary     %s/summary.json\n", strings.TrimRight(dataDir, "/"))
	if s.Error != "" {
		fmt.Fprintf(w, "  error       %s\n", s.Error)
	}
}
