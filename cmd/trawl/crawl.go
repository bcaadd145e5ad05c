package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/warc"
)

func init() {
	register("crawl", "crawl from seed URLs", cmdCrawl)
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// nodeFlags are the node's flags, shared by crawl, demo and serve.
type nodeFlags struct {
	data        string
	minDelay    time.Duration
	maxDelay    time.Duration
	concurrency int
	userAgent   string
	allowNets   multiFlag
	maxAdaptive time.Duration
	gzipLevel   int
}

func (nf *nodeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&nf.data, "data", "./trawl-data", "data directory: state/ (the crawl, resumable), warc/, summary.json")
	fs.DurationVar(&nf.minDelay, "min-delay", time.Second, "least gap between two fetches to one host")
	fs.DurationVar(&nf.maxDelay, "max-delay", 10*time.Minute, "longest gap kept between two fetches to one host (caps Crawl-delay and backoff)")
	fs.IntVar(&nf.concurrency, "concurrency", 64, "fetch workers")
	fs.DurationVar(&nf.maxAdaptive, "max-adaptive-delay", 30*time.Second, "cap on the adaptive term of a host's gap (10 x its last response time)")
	fs.StringVar(&nf.userAgent, "user-agent", node.DefaultUserAgent, "User-Agent header: product token, version and a contact URL")
	fs.Var(&nf.allowNets, "allow-net", "allow connecting to addresses in this CIDR that the IP guard refuses (repeatable)")
	fs.IntVar(&nf.gzipLevel, "warc-gzip-level", warc.DefaultGzipLevel, "gzip level of each WARC record: 1 (fastest) to 9 (smallest)")
}

// crawlFlags are the flags shared by crawl and demo: the node's and the
// one job's.
type crawlFlags struct {
	nodeFlags
	domains  multiFlag
	maxDepth int
	maxPages int
	progress time.Duration
	shapeRun int
	giveUp   time.Duration
}

func (cf *crawlFlags) register(fs *flag.FlagSet) {
	cf.nodeFlags.register(fs)
	fs.Var(&cf.domains, "domain", "crawl only this domain and its subdomains (repeatable; default: the seeds' hosts)")
	fs.IntVar(&cf.maxDepth, "max-depth", 20, "most links followed from a seed (0: no limit)")
	fs.IntVar(&cf.maxPages, "max-pages", 0, "stop after this many page fetches (0: no limit)")
	fs.DurationVar(&cf.giveUp, "robots-give-up", 15*time.Second, "give up a host whose robots.txt stays unavailable (429, 5xx, network errors) this long: about four attempts at a 1s gap (0: never)")
	fs.IntVar(&cf.shapeRun, "max-shape-run", 0, "most consecutive links between URLs of one shape, e.g. calendar months (0: the default, 3; -1: no cap)")
	fs.DurationVar(&cf.progress, "progress", 0, "progress line interval (default: live on a terminal, every 5s otherwise)")
}

// options returns the node's options and the one job's spec of a crawl
// from seeds.
func (cf *crawlFlags) options(seeds []string) (node.Options, job.Spec, error) {
	spec := job.Spec{
		Name:         "crawl",
		Seeds:        seeds,
		Domains:      cf.domains,
		MaxDepth:     cf.maxDepth,
		MaxPages:     cf.maxPages,
		MaxShapeRun:  cf.shapeRun,
		RobotsGiveUp: cf.giveUp,
	}
	o, err := cf.nodeFlags.options()
	if err != nil {
		return o, spec, err
	}
	if cf.giveUp < 0 {
		return o, spec, fmt.Errorf("--robots-give-up %v is negative", cf.giveUp)
	}
	return o, spec, nil
}

// options returns the node's options, checking the flags.
func (nf *nodeFlags) options() (node.Options, error) {
	o := node.Options{
		DataDir:          nf.data,
		MinDelay:         nf.minDelay,
		MaxDelay:         nf.maxDelay,
		MaxAdaptiveDelay: nf.maxAdaptive,
		Concurrency:      nf.concurrency,
		UserAgent:        nf.userAgent,
		WARCGzipLevel:    nf.gzipLevel,
	}
	if nf.minDelay == 0 {
		o.MinDelay = -1 // "--min-delay 0" means no minimum, not the default
	}
	if nf.minDelay < 0 {
		return o, fmt.Errorf("--min-delay %v is negative", nf.minDelay)
	}
	if nf.maxDelay <= 0 || nf.maxDelay < nf.minDelay {
		return o, fmt.Errorf("--max-delay %v must be positive and at least --min-delay", nf.maxDelay)
	}
	if nf.maxAdaptive <= 0 {
		return o, fmt.Errorf("--max-adaptive-delay %v must be positive", nf.maxAdaptive)
	}
	if nf.gzipLevel < 1 || nf.gzipLevel > 9 {
		return o, fmt.Errorf("--warc-gzip-level %d: want 1 (fastest) to 9 (smallest)", nf.gzipLevel)
	}
	for _, s := range nf.allowNets {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return o, fmt.Errorf("--allow-net %q: want a CIDR such as 127.0.0.0/8: %w", s, err)
		}
		o.AllowNets = append(o.AllowNets, p)
	}
	return o, nil
}

func cmdCrawl(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: trawl crawl [flags] [SEED...]")
		fs.PrintDefaults()
	}
	var cf crawlFlags
	cf.register(fs)
	seedsFile := fs.String("seeds", "", "file of seed URLs, one per line (# comments)")
	hostsFile := fs.String("hosts", "", "file mapping names to addresses, /etc/hosts format, asked before DNS")
	fresh := fs.Bool("fresh", false, "wipe the crawl state in --data first (WARC files are kept); without it an existing crawl resumes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	seeds := fs.Args()
	if *seedsFile != "" {
		more, err := readLines(*seedsFile)
		if err != nil {
			fmt.Fprintf(stderr, "trawl crawl: %v\n", err)
			return 2
		}
		seeds = append(seeds, more...)
	}
	if len(seeds) == 0 {
		fmt.Fprintln(stderr, "trawl crawl: no seeds: give URLs as arguments or --seeds FILE")
		return 2
	}
	opts, spec, err := cf.options(seeds)
	if err != nil {
		fmt.Fprintf(stderr, "trawl crawl: %v\n", err)
		return 2
	}
	opts.Fresh = *fresh
	if *hostsFile != "" {
		if opts.Hosts, err = readHostsFile(*hostsFile); err != nil {
			fmt.Fprintf(stderr, "trawl crawl: %v\n", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runCrawl(ctx, opts, spec, cf.progress, stdout, stderr)
}

// runCrawl runs a node with one job, with progress on stderr and the
// summary on stdout, until the job ends or ctx is cancelled (SIGINT). Exit
// code 0 when the crawl ended normally (exhausted, a limit, or a signal), 1
// on a fatal error.
func runCrawl(ctx context.Context, opts node.Options, spec job.Spec, every time.Duration, stdout, stderr io.Writer) int {
	n, err := node.Open(opts)
	if err != nil {
		fmt.Fprintf(stderr, "trawl: %v\n", err)
		return 1
	}
	j, err := n.Submit(spec)
	if err != nil {
		n.Close()
		fmt.Fprintf(stderr, "trawl: %v\n", err)
		return 1
	}
	n.Start()
	done := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		showProgress(n, j.ID, every, stderr, done)
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
	printSummary(stdout, sum, opts.DataDir)
	if err := errors.Join(j.Err(), cerr, werr); err != nil {
		fmt.Fprintf(stderr, "trawl: %v\n", err)
		return 1
	}
	return 0
}

// showProgress redraws one status line on a terminal, or prints a line
// every interval otherwise, until done is closed.
func showProgress(n *node.Node, id job.ID, every time.Duration, w io.Writer, done <-chan struct{}) {
	tty := false
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = true
	}
	if every == 0 {
		every = 5 * time.Second
		if tty {
			every = 500 * time.Millisecond
		}
	}
	line := func() string {
		p, _ := n.Progress(id)
		return progressLine(p)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			if tty {
				fmt.Fprintf(w, "\r\033[K%s\n", line())
			}
			return
		case <-t.C:
			if tty {
				fmt.Fprintf(w, "\r\033[K%s", line())
			} else {
				fmt.Fprintln(w, line())
			}
		}
	}
}

// progressLine is one line of live progress.
func progressLine(p job.Progress) string {
	return fmt.Sprintf("%6.0fs  %d pages  %.1f pages/s  %d queued  hosts: %d active, %d waiting, %d backoff  errors: %s",
		p.Elapsed.Seconds(), p.Pages, p.PagesPerSecond, p.Queued,
		p.HostsReady+p.InFlight, p.HostsWaiting, p.HostsBackoff, countsString(p.Errors))
}

func countsString(m map[string]int64) string {
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

func printSummary(w io.Writer, s *node.Summary, dataDir string) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "crawl %s after %.1fs\n", s.StopReason, s.ElapsedSeconds)
	fmt.Fprintf(w, "  pages       %d (%.1f/s), %d requests incl. %d robots.txt, %.1f MB\n",
		s.Pages, s.PagesPerSecond, s.Requests, s.RobotsFetches, float64(s.Bytes)/1e6)
	fmt.Fprintf(w, "  status      %s\n", countsString(s.Status))
	fmt.Fprintf(w, "  errors      %s\n", countsString(s.Errors))
	fmt.Fprintf(w, "  discovered  %d URLs on %d hosts; %d still queued, %d dropped, %d disallowed by robots.txt, %d out of scope\n",
		s.Discovered, s.Hosts, s.Queued, s.Dropped, s.RobotsDisallowed, s.OutOfScope)
	if s.RobotsGaveUpOn > 0 {
		fmt.Fprintf(w, "  gave up     %d URLs on %d hosts whose robots.txt stayed unavailable (--robots-give-up)\n", s.RobotsGaveUp, s.RobotsGaveUpOn)
	}
	if s.Shared > 0 {
		fmt.Fprintf(w, "  shared      %d pages fetched once for another job too\n", s.Shared)
	}
	fmt.Fprintf(w, "  warc        %d file(s) in %s\n", len(s.WARCFiles), dataDir)
	fmt.Fprintf(w, "  summary     %s/summary.json\n", strings.TrimRight(dataDir, "/"))
	if s.Error != "" {
		fmt.Fprintf(w, "  error       %s\n", s.Error)
	}
}

// numberedLine is a non-empty, non-comment line of a file and its number.
type numberedLine struct {
	n    int
	text string
}

// readNumbered reads the non-empty lines of path that are not # comments.
func readNumbered(path string) ([]numberedLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []numberedLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, numberedLine{n, line})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// readLines reads the non-empty lines of path that are not # comments.
func readLines(path string) ([]string, error) {
	lines, err := readNumbered(path)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out, err
}

// readHostsFile reads "ADDRESS NAME..." lines (/etc/hosts format).
func readHostsFile(path string) (map[string][]netip.Addr, error) {
	lines, err := readNumbered(path)
	if err != nil {
		return nil, err
	}
	m := make(map[string][]netip.Addr)
	var errs []error
	for _, line := range lines {
		fields := strings.Fields(line.text)
		if len(fields) < 2 {
			errs = append(errs, fmt.Errorf("%s: line %d: want ADDRESS NAME, got %q", path, line.n, line.text))
			continue
		}
		a, err := netip.ParseAddr(fields[0])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: line %d: %w", path, line.n, err))
			continue
		}
		for _, name := range fields[1:] {
			name = strings.ToLower(name)
			m[name] = append(m[name], a)
		}
	}
	return m, errors.Join(errs...)
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
