// Package demo runs `trawl demo`: it serves a synthetic web on loopback
// (internal/testkit/testweb: the bundled one, or a chaos web), crawls it
// as `trawl crawl` would a real one (package crawlrun) and prints what
// the web's own request log says about the crawl.
//
// Invariants: each run starts from fresh state (a new web on a new port:
// an earlier run's state would point at addresses that are gone); the
// crawler reaches the web only through loopback and the web's own host
// map; the verdict is the web's, from its log, never the crawler's own
// account; a problem in it fails the run (exit status 1).
package demo

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/crawlrun"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// Options configure Run.
type Options struct {
	// Node configures the crawler; Run adds loopback to AllowNets, the
	// web's host map and Fresh. With Chaos, zero FetchTimeout is 5 s and
	// zero MaxBodyBytes 1 MiB.
	Node node.Options
	// Spec is the crawl's; Run sets its Seeds to the web's. Zero Domains:
	// the web's domain (with Chaos, always the web's). With Chaos, zero
	// RobotsGiveUp is 3 s (the chaos web's horizon).
	Spec job.Spec
	// Progress is how often the progress is shown (crawlrun.Options).
	Progress time.Duration
	// Web is the bundled synthetic web's shape (its Seed, Hosts, Hostile).
	Web testweb.Options
	// Chaos, if not 0, crawls the chaos web of this seed instead of Web,
	// and prints its verdict (testweb.JudgeChaos).
	Chaos int64
	// Check, if set, checks the bundled web's spec once Run has completed
	// it (seeds, domain), before the crawl; its error ends the run with
	// exit status 2, each of its lines after "trawl demo: ".
	Check func(job.Spec) error
}

// loopback is where the synthetic webs live, which the crawler's IP guard
// refuses by default.
var loopback = netip.MustParsePrefix("127.0.0.0/8")

// Run serves the web, crawls it and prints the web's report on stdout,
// the crawl's progress and errors on stderr. It returns trawl demo's exit
// status: 0 when the crawl ended normally and the web saw no problem, 1
// when the web could not be served, the crawl failed or the web saw a
// problem, 2 when Check refused the spec.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) int {
	if o.Chaos != 0 {
		return runChaos(ctx, o, stdout, stderr)
	}
	srv, err := testweb.Serve(testweb.Generate(o.Web), testweb.ServeOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "trawl demo: %v\n", err)
		return 1
	}
	defer srv.Close()
	opts, spec := crawlOf(srv, o)
	if len(spec.Domains) == 0 {
		spec.Domains = []string{srv.Web().Options().Domain}
	}
	if o.Check != nil {
		if err := o.Check(spec); err != nil {
			fmt.Fprintf(stderr, "trawl demo: %v\n", strings.ReplaceAll(err.Error(), "\n", "\ntrawl demo: "))
			return 2
		}
	}
	fmt.Fprintf(stdout, "synthetic web: %d hosts on 127.x.y.z port %d, %d seeds; crawling with a %v gap per host\n",
		len(srv.Resolver()), srv.Port(), len(spec.Seeds), opts.MinDelay)

	start := time.Now()
	code := crawl(ctx, opts, spec, o.Progress, stdout, stderr)
	took := time.Since(start)

	rep := testweb.Analyze(srv.Web(), srv.Log(), testweb.AnalyzeOptions{
		Seeds:            spec.Seeds,
		Agent:            "trawl",
		Gap:              opts.MinDelay,
		MaxDepth:         spec.MaxDepth,
		Domain:           spec.Domains[0],
		MaxParallelPerIP: 2,
	})
	fmt.Fprintf(stdout, "\nwhat the synthetic web saw:\n%s\n", indent(rep.String()))
	fmt.Fprintf(stdout, "  %s\n", criticalLine(rep, opts.MinDelay, took))
	if p := rep.Problems(); len(p) > 0 {
		fmt.Fprintf(stdout, "  %d problems:\n%s\n", len(p), indent(strings.Join(p, "\n")))
		if code == 0 {
			code = 1
		}
	} else {
		fmt.Fprintln(stdout, "  no politeness problems")
	}
	return code
}

// runChaos serves the chaos web of o.Chaos (testweb.Chaos: each host
// draws a site shape and what real servers do), crawls it and prints the
// verdict the chaos tests assert: ended within the bound, gaps,
// robots.txt, Retry-After, repeats, coverage. Exit status 1 if an
// invariant failed.
func runChaos(ctx context.Context, o Options, stdout, stderr io.Writer) int {
	srv, err := testweb.Serve(testweb.Chaos(o.Chaos, testweb.ChaosOptions{}), testweb.ServeOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "trawl demo: %v\n", err)
		return 1
	}
	defer srv.Close()
	opts, spec := crawlOf(srv, o)
	// On loopback a page that never answers need not cost a minute, and
	// the chaos web's huge body is 2 MiB: above a 1 MiB cap.
	if opts.FetchTimeout == 0 {
		opts.FetchTimeout = 5 * time.Second
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if spec.RobotsGiveUp == 0 {
		spec.RobotsGiveUp = 3 * time.Second // the chaos web's horizon
	}
	spec.Domains = []string{srv.Web().Options().Domain}
	fmt.Fprintf(stdout, "chaos web %d: %d hosts on 127.78.x.y port %d; crawling with a %v gap per host\n",
		o.Chaos, len(srv.Resolver()), srv.Port(), opts.MinDelay)
	for _, h := range srv.Web().ChaosHosts() {
		fmt.Fprintf(stdout, "  %s drew %v\n", h.Name, h.Draws)
	}
	start := time.Now()
	code := crawl(ctx, opts, spec, o.Progress, stdout, stderr)
	v := testweb.JudgeChaos(srv, testweb.ChaosJudgeOptions{Seeds: spec.Seeds, Gap: opts.MinDelay,
		FetchTimeout: opts.FetchTimeout, MaxRetries: 2, MaxDepth: spec.MaxDepth,
		Took: time.Since(start), Ended: ctx.Err() == nil})
	fmt.Fprintf(stdout, "\nwhat the chaos web saw:\n%s\n", indent(v.String()))
	if !v.OK() && code == 0 {
		code = 1
	}
	return code
}

// crawlOf is o's node and crawl over the web srv serves: its seeds; its
// loopback addresses allowed (the IP guard refuses them by default) and
// its names resolved through the crawler's static host map; a fresh start,
// since each demo serves a new web on a new port and an earlier demo's
// state would only point at addresses that are gone.
func crawlOf(srv *testweb.Server, o Options) (node.Options, job.Spec) {
	opts, spec := o.Node, o.Spec
	spec.Seeds = srv.Seeds()
	opts.AllowNets = append(opts.AllowNets, loopback)
	opts.Hosts = srv.Resolver()
	opts.Fresh = true
	return opts, spec
}

// crawl runs the crawl as trawl crawl does and returns its exit status:
// 0, or 1 with the error on stderr.
func crawl(ctx context.Context, opts node.Options, spec job.Spec, every time.Duration, stdout, stderr io.Writer) int {
	if err := crawlrun.Run(ctx, crawlrun.Options{Node: opts, Spec: spec, Progress: every}, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "trawl: %v\n", err)
		return 1
	}
	return 0
}

// criticalLine compares the crawl's duration with the critical path, a
// lower bound (testweb.Report.Critical) that holds for a complete crawl:
// for one that missed crawlable URLs it says so instead.
func criticalLine(rep *testweb.Report, gap, took time.Duration) string {
	crit := rep.Critical(gap)
	switch {
	case crit.Duration <= 0:
		return "no critical path: nothing was crawlable"
	case len(rep.Missing) > 0:
		return fmt.Sprintf("duration %.1fs, not compared with the critical path (%.1fs): the crawl missed %d crawlable URLs",
			took.Seconds(), crit.Duration.Seconds(), len(rep.Missing))
	}
	why := "its gap"
	if crit.Gap > gap {
		why = "its Crawl-delay"
	}
	return fmt.Sprintf("duration %.1fs = %.2f x the critical path (%.1fs: %s needs %d requests, robots.txt included, %v apart: %s)",
		took.Seconds(), took.Seconds()/crit.Duration.Seconds(), crit.Duration.Seconds(), crit.Host, crit.Requests, crit.Gap, why)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
