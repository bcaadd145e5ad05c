// Package freshlive is the live freshness benchmark: continuous crawls of a
// changing synthetic web on loopback, each judged by the web's own page
// versions. Every schedule crawls its own copy of the same web (the same
// pages, changing at the same moments), side by side, for the same time;
// each is judged over the same window against uniform recrawl and the
// optimum for the web's true rates at the budget it spent there
// (testweb.FreshnessReport.Judge), so schedules that spend different
// budgets still compare by their gap share.
//
// The default web is the one the freshness target is stated for: 40
// hosts of 15-25 pages, 30% of pages never changing and the rest with mean
// times between changes log-uniform in 30 s..20 min, recrawl bounds
// 20 s..3 min, a 1 s gap per host, 10 minutes of crawling judged over the
// last 6.5. Each crawl's politeness is checked from its web's request log.
package freshlive

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/recrawl"
)

// Config is one run. Zero fields take the defaults named.
type Config struct {
	// Duration is how long each schedule crawls; 0: 10 minutes.
	Duration time.Duration
	// Judged is the end part of Duration that is judged; 0: 65% of it.
	Judged time.Duration
	Seed   int64 // of the web and its changes; 0: 26
	Hosts  int   // 0: 40
	// ChangeMin and ChangeMax bound the changing pages' mean times
	// between changes (log-uniform); 0: 30 s and 20 min. Never is the
	// percentage of pages that never change; 0: 30, negative: none.
	ChangeMin, ChangeMax time.Duration
	Never                int
	// Gap is the least time between two fetches from one host; 0: 1 s.
	Gap time.Duration
	// RecrawlMin and RecrawlMax bound each page's interval; 0: 20 s and
	// 3 min.
	RecrawlMin, RecrawlMax time.Duration
	// Budget is the freshness schedule's recrawl fetches per hour; 0:
	// none.
	Budget float64
	// Schedules are the job.Spec.RecrawlSchedule values to run; nil:
	// freshness and nutch.
	Schedules []string
	// Progress, if set, gets a line every minute of the crawl.
	Progress io.Writer
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.Duration, 10*time.Minute)
	def(&c.Judged, time.Duration(0.65*float64(c.Duration)))
	def(&c.ChangeMin, 30*time.Second)
	def(&c.ChangeMax, 20*time.Minute)
	def(&c.Gap, time.Second)
	def(&c.RecrawlMin, 20*time.Second)
	def(&c.RecrawlMax, 3*time.Minute)
	if c.Seed == 0 {
		c.Seed = 26
	}
	if c.Hosts == 0 {
		c.Hosts = 40
	}
	switch {
	case c.Never == 0:
		c.Never = 30
	case c.Never < 0:
		c.Never = 0
	}
	if c.Schedules == nil {
		c.Schedules = []string{job.ScheduleFreshness, job.ScheduleNutch}
	}
	return c
}

// Validate reports every bad field by its flag's name.
func (c Config) Validate() error {
	var errs []error
	bad := func(flag string, v any, want string) {
		errs = append(errs, fmt.Errorf("--%s %v: want %s", flag, v, want))
	}
	if c.Duration < 0 {
		bad("duration", c.Duration, "a positive duration (0: 10m)")
	}
	d := c
	if c.Duration >= 0 && c.Judged >= 0 && c.ChangeMin >= 0 && c.ChangeMax >= 0 && c.RecrawlMin >= 0 && c.RecrawlMax >= 0 {
		d = c.withDefaults() // the bounds compared as they will be run
	}
	if c.Judged < 0 || d.Judged > d.Duration {
		bad("judged", c.Judged, "a positive duration up to --duration (0: the last 65% of it)")
	}
	if c.Hosts < 0 {
		bad("hosts", c.Hosts, "a positive number of hosts (0: 40)")
	}
	if c.ChangeMin < 0 || c.ChangeMax < 0 || d.ChangeMin > d.ChangeMax {
		bad("change-min", c.ChangeMin, "0 or a positive duration up to --change-max")
	}
	if c.Never > 100 {
		bad("never", c.Never, "a percentage up to 100")
	}
	if c.Gap < 0 {
		bad("gap", c.Gap, "a positive duration (0: 1s)")
	}
	if c.RecrawlMin < 0 || c.RecrawlMax < 0 || d.RecrawlMin > d.RecrawlMax {
		bad("recrawl-min", c.RecrawlMin, "0 or a positive duration up to --recrawl-max")
	}
	if c.Budget < 0 || math.IsNaN(c.Budget) || math.IsInf(c.Budget, 0) {
		bad("budget", c.Budget, "0 (none) or a positive number of fetches per hour")
	}
	for _, s := range c.Schedules {
		if s != job.ScheduleFreshness && s != job.ScheduleNutch {
			bad("schedules", s, job.ScheduleFreshness+" or "+job.ScheduleNutch)
		}
	}
	return errors.Join(errs...)
}

// Row is one schedule's outcome.
type Row struct {
	Schedule string `json:"schedule"`
	// Freshness, MeanAge, Fetches, NotModified and BytesSaved are the
	// web's judgement over the window (testweb.FreshnessReport).
	Pages       int           `json:"pages"`
	Freshness   float64       `json:"freshness"`
	MeanAge     time.Duration `json:"mean_age_ns"`
	Fetches     int           `json:"fetches"`
	NotModified int           `json:"not_modified"`
	BytesSaved  int64         `json:"bytes_saved"`
	// Budget is the fetches per hour spent on judged pages in the window;
	// Uniform and Optimum the freshness of uniform recrawl and of the
	// optimum for the true rates at that budget; GapShare the part of
	// the optimum's gain over uniform this schedule captured.
	Budget   float64 `json:"budget_per_hour"`
	Uniform  float64 `json:"uniform"`
	Optimum  float64 `json:"optimum"`
	GapShare float64 `json:"gap_share"`
	// PeakSecond is the most page fetches that began in one second of
	// the window, MeanSecond the mean: their ratio shows a recrawl storm.
	PeakSecond int     `json:"peak_second"`
	MeanSecond float64 `json:"mean_second"`
	// Classes splits the pages by true change interval.
	Classes []testweb.ClassJudgement `json:"classes"`
	// Problems are politeness or crawl problems the web's log shows;
	// none is the expectation.
	Problems []string `json:"problems,omitempty"`
}

// Result is a run's rows, in the order of Config.Schedules.
type Result struct {
	Config Config `json:"-"`
	Rows   []Row  `json:"rows"`
	// Simulated marks a Result of Simulate: its rows have no 304s,
	// bytes saved, per-second figures or problems.
	Simulated bool  `json:"simulated,omitempty"`
	Seed      int64 `json:"seed"`
}

// Run crawls each schedule's copy of the web at once for c.Duration and
// judges them.
func Run(c Config) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	c = c.withDefaults()
	dir, err := os.MkdirTemp("", "trawl-freshlive-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	// Ten minutes of changes before the crawl, so that the web is in its
	// steady state when the crawl starts; the same epoch for every copy.
	start := time.Now()
	wo := testweb.Options{Seed: c.Seed, Hosts: c.Hosts, BigHosts: -1, MinPages: 15, MaxPages: 25, Latency: -1,
		Changing: true, ChangeEpoch: start.Add(-10 * time.Minute).UTC(),
		ChangeRange: testweb.ChangeRange{Min: c.ChangeMin, Max: c.ChangeMax, Never: c.Never}}.SmallPages()
	res := Result{Config: c, Rows: make([]Row, len(c.Schedules)), Seed: c.Seed}
	errs := make([]error, len(c.Schedules))
	var wg sync.WaitGroup
	for i, sched := range c.Schedules {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Rows[i], errs[i] = crawl(c, wo, sched, filepath.Join(dir, fmt.Sprint(i)), start)
		}()
	}
	if c.Progress != nil {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		tick := time.NewTicker(time.Minute)
	loop:
		for {
			select {
			case <-done:
				break loop
			case <-tick.C:
				fmt.Fprintf(c.Progress, "trawl bench freshness-live: %v of %v crawled\n", time.Since(start).Round(time.Second), c.Duration)
			}
		}
		tick.Stop()
	}
	wg.Wait()
	return res, errors.Join(errs...)
}

// crawl runs one schedule's continuous crawl of its own copy of the web
// wo until start+c.Duration, and judges it.
func crawl(c Config, wo testweb.Options, sched, dir string, start time.Time) (Row, error) {
	row := Row{Schedule: sched}
	srv, err := testweb.Serve(testweb.Generate(wo), testweb.ServeOptions{})
	if err != nil {
		return row, err
	}
	defer srv.Close()
	n, err := node.Open(node.Options{DataDir: dir, MinDelay: c.Gap, Concurrency: 32,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: srv.Resolver()})
	if err != nil {
		return row, err
	}
	spec := job.Defaults()
	spec.Name, spec.Seeds, spec.Domains = "freshness-"+sched, srv.Seeds(), []string{srv.Web().Options().Domain}
	spec.Continuous, spec.RecrawlMin, spec.RecrawlMax, spec.RecrawlSchedule = true, c.RecrawlMin, c.RecrawlMax, sched
	if sched == job.ScheduleFreshness {
		spec.RecrawlBudget = c.Budget
	}
	// The web's hosts that never answer robots.txt are given up after a
	// few seconds, not the default quarter minute, as a crawl test does.
	spec.RobotsGiveUp = 4 * time.Second
	j, err := n.Submit(spec)
	if err != nil {
		n.Close()
		return row, err
	}
	n.Start()
	time.Sleep(time.Until(start.Add(c.Duration)))
	if err := n.Cancel(j.ID); err != nil {
		n.Close()
		return row, err
	}
	if err := n.Close(); err != nil {
		return row, err
	}
	to := start.Add(c.Duration)
	from := to.Add(-c.Judged)
	rep := srv.Freshness(from, to, 250*time.Millisecond, nil)
	pol, err := recrawl.New(recrawl.Options{MinInterval: c.RecrawlMin, MaxInterval: c.RecrawlMax})
	if err != nil {
		return row, err
	}
	jd := rep.Judge(pol)
	row.Pages, row.Freshness, row.MeanAge = rep.Pages, rep.Freshness, rep.MeanAge
	row.Fetches, row.NotModified, row.BytesSaved = rep.Fetches, rep.NotModified, rep.BytesSaved
	row.Budget, row.Uniform, row.Optimum, row.GapShare = rep.Budget(), jd.Uniform, jd.Optimum, jd.GapShare
	row.Classes = jd.Classes
	row.PeakSecond, row.MeanSecond = testweb.PerSecond(srv.Log(), from, to)
	an := testweb.Analyze(srv.Web(), srv.Log(), testweb.AnalyzeOptions{Seeds: spec.Seeds, Agent: "trawl", Gap: c.Gap,
		MaxDepth: spec.MaxDepth, Domain: spec.Domains[0], MaxParallel: 1, MaxParallelPerIP: 2})
	for _, p := range an.Problems() {
		if !strings.HasPrefix(p, "repeat: ") { // a continuous crawl refetches by design
			row.Problems = append(row.Problems, p)
		}
	}
	return row, nil
}

// Print writes r as a table.
func Print(w io.Writer, r Result) {
	c := r.Config
	kind := "live freshness"
	if r.Simulated {
		kind = "simulated freshness (a model of the live crawl)"
	}
	fmt.Fprintf(w, "%s: %d hosts, %d%% of pages never changing, the rest every %v..%v (log-uniform); gap %v; recrawl %v..%v; %v crawled, the last %v judged; seed %d\n",
		kind, c.Hosts, c.Never, c.ChangeMin, c.ChangeMax, c.Gap, c.RecrawlMin, c.RecrawlMax, c.Duration, c.Judged, c.Seed)
	fmt.Fprintf(w, "%-10s %5s %9s %8s %8s %9s %9s %8s %9s %9s %12s %11s\n",
		"schedule", "pages", "freshness", "uniform", "optimum", "gap share", "mean age", "fetches", "budget/h", "304s", "bytes saved", "peak/mean s")
	for _, x := range r.Rows {
		ratio := 0.0
		if x.MeanSecond > 0 {
			ratio = float64(x.PeakSecond) / x.MeanSecond
		}
		notModified, saved, peak := fmt.Sprint(x.NotModified), fmt.Sprint(x.BytesSaved), fmt.Sprintf("%d/%.1f=%.1fx", x.PeakSecond, x.MeanSecond, ratio)
		if r.Simulated {
			notModified, saved, peak = "-", "-", "-"
		}
		fmt.Fprintf(w, "%-10s %5d %9.3f %8.3f %8.3f %9.2f %9v %8d %9.0f %9s %12s %11s\n",
			x.Schedule, x.Pages, x.Freshness, x.Uniform, x.Optimum, x.GapShare, x.MeanAge.Round(100*time.Millisecond), x.Fetches, x.Budget,
			notModified, saved, peak)
	}
	fmt.Fprintf(w, "\nfetches a page in the window, by true change interval (the optimum's at the same budget in brackets)\n%-10s", "schedule")
	if len(r.Rows) > 0 {
		for _, cl := range r.Rows[0].Classes {
			fmt.Fprintf(w, " %16s", cl.Name)
		}
	}
	fmt.Fprintln(w)
	for _, x := range r.Rows {
		fmt.Fprintf(w, "%-10s", x.Schedule)
		for _, cl := range x.Classes {
			if cl.Pages == 0 {
				fmt.Fprintf(w, " %16s", "-")
				continue
			}
			fmt.Fprintf(w, " %16s", fmt.Sprintf("%.1f (%.1f)", float64(cl.Fetches)/float64(cl.Pages), cl.OptimumFetches/float64(cl.Pages)))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\ngap share: (freshness - uniform) / (optimum - uniform), uniform and optimum at the budget each schedule spent")
	for _, x := range r.Rows {
		for _, p := range x.Problems {
			fmt.Fprintf(w, "%s: %s\n", x.Schedule, p)
		}
	}
}
