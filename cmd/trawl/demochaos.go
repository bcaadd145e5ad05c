package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// demoChaos serves the chaos web of seed (testweb.Chaos: each host draws
// a site shape and what real servers do), crawls it as `trawl crawl`
// would, and prints the verdict the chaos tests assert: ended within the
// bound, gaps, robots.txt, Retry-After, repeats, coverage. Exit status 1
// if an invariant failed.
func demoChaos(a *demoArgs, stdout, stderr io.Writer) int {
	srv, err := testweb.Serve(testweb.Chaos(a.chaos, testweb.ChaosOptions{}), testweb.ServeOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "trawl demo: %v\n", err)
		return 1
	}
	defer srv.Close()
	opts, spec, err := a.crawlFlags.options(srv.Seeds())
	if err != nil {
		fmt.Fprintf(stderr, "trawl demo: %v\n", err)
		return 2
	}
	opts.AllowNets = append(opts.AllowNets, mustPrefix("127.0.0.0/8"))
	opts.Hosts = srv.Resolver()
	opts.Fresh = true
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
		a.chaos, len(srv.Resolver()), srv.Port(), opts.MinDelay)
	for _, h := range srv.Web().ChaosHosts() {
		fmt.Fprintf(stdout, "  %s drew %v\n", h.Name, h.Draws)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	code := runCrawl(ctx, opts, spec, a.crawlFlags.progress, stdout, stderr)
	v := testweb.JudgeChaos(srv, testweb.ChaosJudgeOptions{Seeds: spec.Seeds, Gap: opts.MinDelay,
		FetchTimeout: opts.FetchTimeout, MaxRetries: 2, MaxDepth: spec.MaxDepth,
		Took: time.Since(start), Ended: ctx.Err() == nil})
	fmt.Fprintf(stdout, "\nwhat the chaos web saw:\n%s\n", indent(v.String()))
	if !v.OK() && code == 0 {
		code = 1
	}
	return code
}
