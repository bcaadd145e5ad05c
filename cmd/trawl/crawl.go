package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/cli/crawlrun"
	"github.com/trawl-crawler/trawl/internal/cli/linefile"
	"github.com/trawl-crawler/trawl/internal/procstat"
	"github.com/trawl-crawler/trawl/internal/store/urlseen"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/warc"
)

func init() {
	register("crawl", "crawl from seed URLs", cmdCrawl)
	leaf("crawl", func(fs *flag.FlagSet) { new(crawlArgs).register(fs) })
}

// multiFlag collects a repeatable string flag; in the config file it takes
// a list.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
func (m *multiFlag) IsRepeatable() bool { return true }

// reachFlag is --requisites: alone it means any host (as a browser
// loads a page's resources), with a value the reach it names
// (job.Spec.Requisites, which checks it); "false" or "" none.
type reachFlag string

func (r *reachFlag) String() string { return string(*r) }
func (r *reachFlag) Set(v string) error {
	switch v {
	case "true":
		*r = job.RequisitesAny
	case "false":
		*r = ""
	default:
		*r = reachFlag(v)
	}
	return nil
}
func (r *reachFlag) IsBoolFlag() bool { return true }

// registerRequisites registers --requisites, --requisite-hops,
// --purpose, --on-denied and --tdmrep into spec: `trawl crawl`'s, `trawl demo`'s
// and `trawl crawls create`'s.
func registerRequisites(fs *flag.FlagSet, spec *job.Spec) {
	fs.Var((*reachFlag)(&spec.Requisites), "requisites", "also fetch and archive what each page embeds (images, stylesheets and their fonts and imports, scripts, media, frames) from any host; =site: only from the page's registered domain, =host: only its host")
	fs.IntVar(&spec.RequisiteHops, "requisite-hops", 0, "with --requisites, most references from a page to a resource, e.g. page -> stylesheet -> font is 2 (0: 3)")
	fs.StringVar(&spec.Purpose, "purpose", "", "what the crawl's content is for (archive, search, ai-train or ai-input): pages whose site denies it (robots.txt Content-Usage/Content-Signal, X-Robots-Tag, robots meta, TDMRep) are marked, or with --on-denied skip not archived")
	fs.StringVar(&spec.OnDenied, "on-denied", "", "with --purpose, what to do with a page whose site denies it: mark (archive it, marked; the default) or skip (do not archive it)")
	fs.BoolVar(&spec.TDMRep, "tdmrep", false, "fetch each origin's /.well-known/tdmrep.json (TDM reservations) before its pages, archive it and record its rule with each page's usage statements: one request per origin a day (always with --purpose ai-train)")
}

// nodeEnv are the environment variables of the node's flags, for crawl
// and serve (not demo, which wipes its --data: a variable meant for a real
// crawl must not point it there).
var nodeEnv = map[string]string{"data": "TRAWL_DATA", "user-agent": "TRAWL_USER_AGENT"}

// nodeFlags are the node's flags, shared by crawl, demo and serve.
type nodeFlags struct {
	data        string
	minDelay    time.Duration
	maxDelay    time.Duration
	concurrency int
	userAgent   string
	allowNets   multiFlag
	caFile      string
	maxAdaptive time.Duration
	gzipLevel   int
	hostBudget  int
	dupAllow    int
	nearRes     float64
	noSitemaps  bool
	sourceAddr  string
	fetchTO     time.Duration
	expected    uint
}

func (nf *nodeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&nf.data, "data", node.DefaultDataDir, "data directory: state/ (the crawl, resumable), warc/, summary.json")
	fs.DurationVar(&nf.minDelay, "min-delay", frontier.DefaultMinDelay, "least gap between two fetches to one host")
	fs.DurationVar(&nf.maxDelay, "max-delay", frontier.DefaultMaxDelay, "longest gap kept between two fetches to one host (caps Crawl-delay and backoff)")
	fs.IntVar(&nf.concurrency, "concurrency", node.DefaultConcurrency, "fetch workers")
	fs.DurationVar(&nf.maxAdaptive, "max-adaptive-delay", frontier.DefaultMaxAdaptiveDelay, "cap on the adaptive term of a host's gap (10 x its last response time)")
	fs.StringVar(&nf.userAgent, "user-agent", node.DefaultUserAgent, "User-Agent header: product token, version and a contact URL")
	fs.Var(&nf.allowNets, "allow-net", "allow connecting to addresses in this CIDR that the IP guard refuses (repeatable)")
	fs.StringVar(&nf.caFile, "ca-file", "", "PEM file of CA certificates trusted for HTTPS in addition to the system roots")
	fs.IntVar(&nf.gzipLevel, "warc-gzip-level", warc.DefaultGzipLevel, "gzip level of each WARC record: 1 (fastest) to 9 (smallest)")
	fs.IntVar(&nf.hostBudget, "host-budget", node.DefaultHostBudget, "most pages fetched from one host")
	fs.IntVar(&nf.dupAllow, "duplicate-allowance", node.DefaultDuplicateAllowance, "cut off a host once its duplicate pages (exact or near) outnumber its distinct ones by more than this (-1: never)")
	fs.Float64Var(&nf.nearRes, "near-resemblance", node.DefaultNearResemblance, "a page whose main text resembles an archived page's at least this much (share of shared word pairs, its host's template left out) is recorded as a near-duplicate (above 0 to 1; -1: no near-duplicate gate)")
	fs.StringVar(&nf.sourceAddr, "source-addr", "", "send every fetch from this local IP address (one of this machine's; default: the system picks)")
	fs.DurationVar(&nf.fetchTO, "fetch-timeout", node.DefaultFetchTimeout, "longest one fetch (robots.txt, sitemap or page) may take, connection to last byte")
	fs.UintVar(&nf.expected, "expected-urls", urlseen.DefaultExpectedURLs, "URLs the URL-seen gate's Bloom filters are sized for (about 1.3 bytes a URL for each of three); a crawl that outgrows it keeps working, its filters grow")
	fs.BoolVar(&nf.noSitemaps, "no-sitemaps", false, "read no sitemaps (by default each host's robots.txt Sitemap: files and /sitemap.xml are read before its pages)")
}

// maxExpectedURLs bounds --expected-urls: a trillion URLs' filters would
// take about 3.6 TB.
const maxExpectedURLs = 1e12

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
	maxWait  time.Duration
	// reqs holds --requisites, --requisite-hops, --purpose, --on-denied and --tdmrep
	reqs job.Spec
	// src says where each flag's value came from (parseFlags), for errors
	// that name a value set in the config file.
	src map[string]config.Source
}

func (cf *crawlFlags) register(fs *flag.FlagSet) {
	cf.nodeFlags.register(fs)
	d := job.Defaults()
	fs.Var(&cf.domains, "domain", "crawl only this domain and its subdomains (repeatable; default: the seeds' hosts)")
	fs.IntVar(&cf.maxDepth, "max-depth", d.MaxDepth, "most links followed from a seed (0: no limit)")
	fs.IntVar(&cf.maxPages, "max-pages", d.MaxPages, "stop after this many page fetches (0: no limit)")
	fs.DurationVar(&cf.giveUp, "robots-give-up", d.RobotsGiveUp, "give up a host whose robots.txt stays unavailable (429, 5xx, network errors) this long: about four attempts at a 1s gap (0: never)")
	fs.DurationVar(&cf.maxWait, "max-wait", d.MaxWait, "once nothing else may be fetched within this, give up hosts that ask to wait longer (Retry-After, backoff, robots.txt outages), so the crawl ends (0: wait for ever)")
	fs.IntVar(&cf.shapeRun, "max-shape-run", d.MaxShapeRun, "most pages in a row of one URL shape that yield no new link or text, e.g. calendar months (0: the default, 3; -1: no cap)")
	fs.DurationVar(&cf.progress, "progress", 0, "progress interval (default: a live display redrawn every 0.5s on a terminal, a line every 5s otherwise)")
	registerRequisites(fs, &cf.reqs)
}

// recrawlFlags make a crawl continuous: `trawl crawl`'s and `trawl crawls
// create`'s.
type recrawlFlags struct {
	continuous bool
	min, max   time.Duration
	budget     float64
	schedule   string
}

func (rf *recrawlFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&rf.continuous, "continuous", false, "never end: once every page is fetched, recrawl each as its change rate calls for, until stopped or cancelled")
	fs.DurationVar(&rf.min, "recrawl-min", 0, "with --continuous, the least time between two fetches of a page (0: 1h)")
	fs.DurationVar(&rf.max, "recrawl-max", 0, "with --continuous, the most time between two fetches of a page (0: 720h, 30 days)")
	fs.Float64Var(&rf.budget, "recrawl-budget", 0, "with --continuous, the recrawl fetches per hour, spread over the pages for the best freshness (0: no budget)")
	fs.StringVar(&rf.schedule, "recrawl-schedule", "", "with --continuous, how each page's next visit is chosen: freshness (learned change rates; the default) or nutch (Nutch's adaptive interval)")
}

// apply sets spec's recrawl fields from the flags; spec.Validate checks
// them (a --recrawl flag without --continuous is an error, not ignored).
func (rf *recrawlFlags) apply(spec *job.Spec) {
	spec.Continuous, spec.RecrawlMin, spec.RecrawlMax, spec.RecrawlBudget, spec.RecrawlSchedule = rf.continuous, rf.min, rf.max, rf.budget, rf.schedule
}

// specFlags name job.Spec's fields as the flags of trawl crawl, trawl demo
// and trawl crawls create do (and the config file's keys, the same names
// without dashes); "seed" stands for the seed arguments and files.
var specFlags = map[string]string{"Name": "--name", "Seeds": "seed", "Domains": "--domain",
	"MaxDepth": "--max-depth", "MaxPages": "--max-pages", "MaxShapeRun": "--max-shape-run", "Priority": "--priority",
	"RobotsGiveUp": "--robots-give-up", "MaxWait": "--max-wait", "Continuous": "--continuous",
	"RecrawlMin": "--recrawl-min", "RecrawlMax": "--recrawl-max", "RecrawlBudget": "--recrawl-budget",
	"RecrawlSchedule": "--recrawl-schedule", "Requisites": "--requisites", "RequisiteHops": "--requisite-hops",
	"Purpose": "--purpose", "OnDenied": "--on-denied", "TDMRep": "--tdmrep"}

// checkSpec validates spec, a crawl's from the flags, and returns its
// errors in the flags' words, one a line: "--max-depth -1 is negative:
// want 0 (no limit) or more", with "(set in the config file)" for a value
// that came from there (src, parseFlags's; nil: none did).
func checkSpec(spec job.Spec, src map[string]config.Source) error {
	err := spec.Validate()
	if err == nil {
		return nil
	}
	var lines []string
	for _, fe := range job.FieldErrors(err) {
		name := specFlags[fe.Field]
		if name == "" {
			name = fe.Path()
		}
		why := fe.In(func(f string) string {
			if n, ok := specFlags[f]; ok {
				return n
			}
			return f
		})
		line := name + " " + why
		if fe.Field == "Seeds" && fe.Index < 0 {
			line = "seeds: " + why
		}
		if src[strings.TrimPrefix(name, "--")] == config.FromFile {
			line += " (set in the config file)"
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return err
	}
	return errors.New(strings.Join(lines, "\n"))
}

// crawlArgs are `trawl crawl`'s flags.
type crawlArgs struct {
	crawlFlags
	recrawl              recrawlFlags
	seedsFile, hostsFile string
	fresh                bool
}

func (a *crawlArgs) register(fs *flag.FlagSet) {
	a.crawlFlags.register(fs)
	a.recrawl.register(fs)
	fs.StringVar(&a.seedsFile, "seeds", "", "file of seed URLs, one per line (# comments)")
	fs.StringVar(&a.hostsFile, "hosts", "", "file mapping names to addresses, /etc/hosts format, asked before DNS")
	fs.BoolVar(&a.fresh, "fresh", false, "wipe the crawl state in --data first (WARC files are kept); without it an existing crawl resumes")
}

const crawlHelp = `usage: trawl crawl [flags] [SEED...]

Crawls from the seed URLs (arguments and --seeds FILE) with one node and one
job named "crawl", politely (see the README), until nothing is left, a limit
is reached, or SIGINT/SIGTERM. With --continuous it does not end when
nothing is left: it recrawls the pages it fetched, each as often as it is
seen to change (between --recrawl-min and --recrawl-max, within
--recrawl-budget fetches an hour), until SIGINT/SIGTERM. Writes DATA/warc/*.warc.gz and
DATA/summary.json; the same command on the same --data resumes the crawl,
also after a crash. Progress goes to stderr: on a terminal, a live display
redrawn in place; otherwise a line every --progress. The summary goes to
stdout. Exit status 0 when the crawl ended normally, 1 on a fatal error, 2
on a usage error.

Examples:
  trawl crawl https://example.org/
  trawl crawl --seeds seeds.txt --domain example.org --max-depth 5 --data /srv/crawl
  trawl crawl --max-pages 1000 --min-delay 2s --fresh https://example.org/
  trawl crawl --continuous --recrawl-min 6h --recrawl-budget 500 https://example.org/
  TRAWL_DATA=/srv/crawl trawl crawl --config trawl.json https://example.org/`

// options returns the node's options and the one job's spec of a crawl
// from seeds, checking the flags (the spec's too, with checkSpec, which
// the caller runs again after changing the spec).
func (cf *crawlFlags) options(seeds []string) (node.Options, job.Spec, error) {
	spec := job.Defaults()
	spec.Name, spec.Seeds, spec.Domains = "crawl", seeds, cf.domains
	spec.MaxDepth, spec.MaxPages, spec.MaxShapeRun, spec.RobotsGiveUp, spec.MaxWait = cf.maxDepth, cf.maxPages, cf.shapeRun, cf.giveUp, cf.maxWait
	spec.Requisites, spec.RequisiteHops = cf.reqs.Requisites, cf.reqs.RequisiteHops
	spec.Purpose, spec.OnDenied, spec.TDMRep = cf.reqs.Purpose, cf.reqs.OnDenied, cf.reqs.TDMRep
	o, err := cf.nodeFlags.options()
	if err != nil {
		return o, spec, err
	}
	return o, spec, nil
}

// options returns the node's options, checking the flags.
func (nf *nodeFlags) options() (node.Options, error) {
	o := node.Options{
		DataDir:            nf.data,
		MinDelay:           nf.minDelay,
		MaxDelay:           nf.maxDelay,
		MaxAdaptiveDelay:   nf.maxAdaptive,
		Concurrency:        nf.concurrency,
		UserAgent:          nf.userAgent,
		WARCGzipLevel:      nf.gzipLevel,
		HostBudget:         nf.hostBudget,
		DuplicateAllowance: nf.dupAllow,
		NearResemblance:    nf.nearRes,
		NoSitemaps:         nf.noSitemaps,
		FetchTimeout:       nf.fetchTO,
		ExpectedURLs:       nf.expected,
	}
	if nf.expected < 1 || nf.expected > maxExpectedURLs {
		return o, fmt.Errorf("--expected-urls %d: want 1 to %d (the filters grow past it; 10000000 by default)", nf.expected, uint(maxExpectedURLs))
	}
	if mem, need := procstat.MachineMemory(), 3*urlseen.FilterSize(nf.expected, urlseen.DefaultFalsePositiveRate); mem > 0 && need > mem/2 {
		return o, fmt.Errorf("--expected-urls %d: its three Bloom filters would take %.1f GiB, more than half of the %.1f GiB this process may use; size them for fewer URLs (they grow past it)", nf.expected, float64(need)/(1<<30), float64(mem)/(1<<30))
	}
	if nf.fetchTO < 0 {
		return o, fmt.Errorf("--fetch-timeout %v is negative", nf.fetchTO)
	}
	if nf.hostBudget < 1 {
		return o, fmt.Errorf("--host-budget %d: want at least 1", nf.hostBudget)
	}
	if nf.dupAllow == 0 || nf.dupAllow < -1 {
		return o, fmt.Errorf("--duplicate-allowance %d: want at least 1, or -1 for no cut", nf.dupAllow)
	}
	if nf.nearRes != -1 && (nf.nearRes <= 0 || nf.nearRes > 1) {
		return o, fmt.Errorf("--near-resemblance %v: want above 0 and at most 1 (0.75: pages sharing three quarters of their word pairs), or -1 for no near-duplicate gate", nf.nearRes)
	}
	if nf.minDelay == 0 {
		o.MinDelay = -1 // "--min-delay 0" means no minimum, not the default
	}
	if nf.minDelay < 0 {
		return o, fmt.Errorf("--min-delay %v is negative", nf.minDelay)
	}
	if nf.maxDelay <= 0 || !frontier.ValidMaxDelay(nf.minDelay, nf.maxDelay) {
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
	if nf.sourceAddr != "" {
		a, err := netip.ParseAddr(nf.sourceAddr)
		if err != nil {
			return o, fmt.Errorf("--source-addr %q: want an IP address such as 127.0.0.11: %w", nf.sourceAddr, err)
		}
		o.SourceAddr = a
	}
	if nf.caFile != "" {
		pemBytes, err := os.ReadFile(nf.caFile)
		if err != nil {
			return o, fmt.Errorf("--ca-file %q: %w", nf.caFile, err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pemBytes) {
			return o, fmt.Errorf("--ca-file %q: no PEM certificate in it", nf.caFile)
		}
		o.CACerts = pemBytes
	}
	return o, nil
}

// options returns the node's options and the job's spec of `trawl
// crawl` from seeds, checking the flags.
func (a *crawlArgs) options(seeds []string) (node.Options, job.Spec, error) {
	opts, spec, err := a.crawlFlags.options(seeds)
	if err != nil {
		return opts, spec, err
	}
	opts.Fresh = a.fresh
	a.recrawl.apply(&spec)
	return opts, spec, checkSpec(spec, a.src)
}

func cmdCrawl(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("crawl", crawlHelp, nodeEnv, stderr)
	var a crawlArgs
	a.register(fs)
	src, code, ok := parseFlags(fs, args, nodeEnv, stderr)
	if !ok {
		return code
	}
	cf := &a.crawlFlags
	cf.src = src
	seeds := fs.Args()
	if a.seedsFile != "" {
		more, err := linefile.Lines(a.seedsFile)
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
	// Every value, the spec's included, is checked here: before --fresh
	// or anything else touches the data directory (node.Open).
	opts, spec, err := a.options(seeds)
	if err != nil {
		fmt.Fprintf(stderr, "trawl crawl: %v\n", strings.ReplaceAll(err.Error(), "\n", "\ntrawl crawl: "))
		return 2
	}
	if a.hostsFile != "" {
		if opts.Hosts, err = linefile.Hosts(a.hostsFile); err != nil {
			fmt.Fprintf(stderr, "trawl crawl: %v\n", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := crawlrun.Run(ctx, crawlrun.Options{Node: opts, Spec: spec, Progress: cf.progress}, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "trawl: %v\n", err)
		return 1
	}
	return 0
}
