package node

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/robots"
	"github.com/trawl-crawler/trawl/warc"
)

// DefaultUserAgent names the crawler and where to learn about it. Its
// product token ("trawl") is what robots.txt groups are matched against.
const DefaultUserAgent = "trawl/0.1 (+https://github.com/trawl-crawler/trawl)"

// DefaultMinSyncInterval is Options.MinSyncInterval's default.
const DefaultMinSyncInterval = 5 * time.Millisecond

// DefaultDataDir is where a node keeps its state, WARC files and logs
// unless told otherwise; the clients look there for the API token too.
const DefaultDataDir = "./trawl-data"

// Defaults of Options fields that the command line's flags show too.
const (
	DefaultConcurrency        = 64
	DefaultHostBudget         = 10000
	DefaultDuplicateAllowance = 20
	DefaultFetchTimeout       = 60 * time.Second
)

// DefaultNearResemblance is Options.NearResemblance's default: chosen on
// labelled near copies and real documentation trees (docs/design/dedup.md).
const DefaultNearResemblance = 0.75

// Options configures a node: the process-wide parts every job shares. A
// zero field takes the default named.
type Options struct {
	// DataDir holds the node's state (DataDir/state, Pebble) and WARC
	// files (DataDir/warc). Default "./trawl-data".
	DataDir string
	// Fresh deletes the state (DataDir/state) before opening; WARC files
	// are kept. Without it, a data directory holding earlier jobs resumes
	// them.
	Fresh bool
	// FS is the file system of DataDir. Default vfs.Default (the OS);
	// tests put the store and the WARC files on one vfs.NewCrashableMem to
	// simulate a power cut.
	FS vfs.FS

	// Concurrency is the number of fetch workers. Default 64.
	Concurrency int
	// UserAgent is the User-Agent header; its product token
	// (robots.ProductToken) is matched against robots.txt. It should carry
	// a contact URL. Default DefaultUserAgent.
	UserAgent string
	// AllowNets lets the node connect to addresses the IP guard would
	// refuse: every range that is not globally reachable (loopback,
	// private, link-local, CGNAT, documentation, benchmarking, multicast,
	// cloud metadata, ... and IPv6 addresses carrying such an IPv4;
	// fetch/guard.go lists them with their sources).
	AllowNets []netip.Prefix
	// SourceAddr is the source address of the node's fetches (the IP the
	// sites see), for a machine with several (fetch.Options.LocalAddr).
	// Zero: the system picks.
	SourceAddr netip.Addr
	// CACerts holds PEM certificates of authorities the fetcher trusts in
	// addition to the system roots (trawl --ca-file: a private or test
	// CA). Nil: the system roots alone. Checked by fetch.Options.Validate
	// at Open.
	CACerts []byte
	// Hosts maps host names to addresses before DNS is asked (the
	// synthetic web uses it). Keys are lower-case.
	Hosts map[string][]netip.Addr

	// MinDelay is the least gap between two fetches to one host. Default
	// 1s; negative means no minimum (Crawl-delay, the adaptive term and
	// backoff still apply).
	MinDelay time.Duration
	// MaxDelay caps the gap that Crawl-delay (itself capped at
	// robots.MaxCrawlDelay) and backoff after 429, 503 and time-outs can
	// reach. After a crash that lost a host's robots.txt answer, and so its
	// Crawl-delay, the host is left alone for min(MaxDelay,
	// robots.MaxCrawlDelay) from the lost request. Default 10m.
	MaxDelay time.Duration
	// MaxAdaptiveDelay caps the adaptive term of the gap, ten times the
	// host's last response time, so that one slow-drip response cannot
	// park a host for minutes. Default 30s (Heritrix's default max delay).
	// Unlike frontier.Options, a node refuses a negative value (no cap):
	// a slow-drip server must never park a host for ever.
	MaxAdaptiveDelay time.Duration
	// HostBudget is the most pages fetched from one host. Default 10000.
	HostBudget int
	// DuplicateAllowance cuts the budget of a host whose pages are mostly
	// duplicates (exact or near): once its duplicate pages outnumber its
	// distinct ones by more than this, what is queued for it is dropped
	// (frontier.Options.DuplicateAllowance). Default 20; negative: no cut.
	DuplicateAllowance int
	// NearResemblance is the resemblance of two HTML pages' main text (the
	// estimated Jaccard similarity of their word 2-shingles, the host's
	// template left out: simhash.Print) at or above which the later page
	// is a near-duplicate of the earlier: archived in full, recorded as
	// such (crawl log, stats), its links followed. Default
	// DefaultNearResemblance; 0 to 1; negative: no near-duplicate gate.
	// Pages of fewer than 30 words of main text are never judged.
	NearResemblance float64
	// MaxRedirects caps a redirect chain. Default 5.
	MaxRedirects int
	// MaxRetries is how often a URL is retried after a 429, 503 or network
	// failure before it is given up. Default 2.
	MaxRetries int
	// RobotsRetry is the wait before robots.txt is asked again after an
	// unavailable answer (429, 5xx, network error); it doubles with each
	// failure in a row, up to an hour. The host's URLs wait meanwhile.
	// Default max(2 x MinDelay, 1s).
	RobotsRetry time.Duration

	// RecrawlTick is how often the recrawl schedule is looked at for
	// pages due (of continuous jobs). Default DefaultRecrawlTick (1s).
	RecrawlTick time.Duration
	// FreshnessEvery is how often the whole recrawl schedule is read for
	// the continuous jobs' freshness figures and budgets. Default
	// DefaultFreshnessEvery (30s).
	FreshnessEvery time.Duration

	// CrawlLogMaxBytes rotates the crawl log (DataDir/logs/crawl.log) at
	// this size. Default 64 MiB.
	CrawlLogMaxBytes int64

	// WARCMaxSize rotates WARC files at this size. Default 1 GiB.
	WARCMaxSize int64
	// MinSyncInterval is the least time between two fsyncs of the WARC
	// file and between two of the store's log: under load, the pages
	// completed meanwhile share one fsync (fsyncs cost CPU, not only disk
	// time), at the price of up to this much more latency per completion.
	// Nothing is acknowledged before it is durable. Zero means
	// DefaultMinSyncInterval; negative syncs as soon as asked.
	MinSyncInterval time.Duration
	// WARCGzipLevel is the gzip level of each WARC record, 1 (fastest) to
	// 9 (smallest); 0 means warc.DefaultGzipLevel.
	WARCGzipLevel int
	// FetchTimeout bounds a whole fetch. Default 60s.
	FetchTimeout time.Duration
	// MaxBodyBytes caps a response body as transferred. Default 10 MiB.
	MaxBodyBytes int64
	// MaxDecodedBytes caps a response body after content decoding, where
	// a compression bomb stops. Default 50 MiB.
	MaxDecodedBytes int64
	// StopGrace is how long the fetches in flight when the node stops may
	// take to finish (and be archived and recorded) before they are cut
	// off. Default 5s; negative means none.
	StopGrace time.Duration
	// ExpectedURLs sizes the URL-seen Bloom filter, and the ones over the
	// per-URL records and payload digests (State): about 12 MB each at
	// the default, 10 million. A crawl that outgrows it keeps its false-
	// positive rate (the filters grow in layers within the run, and are
	// rebuilt at start-up for twice the keys in the store).
	ExpectedURLs uint
	// MaxSeenFilterBytes caps each of those filters' growth within a run
	// (package urlseen, DurableOptions.MaxFilterBytes): past it a filter
	// answers "maybe" more and more often, each settled by a store read.
	// Zero: no cap.
	MaxSeenFilterBytes int64
	// SharedPages is how many recently read sitemap files are kept in
	// memory while other jobs have not ended, so that a file wanted by
	// several jobs is fetched once (pages are shared through their
	// durable records: shared.go). Default 4096; negative turns sharing
	// off, of pages too.
	SharedPages int

	// NoSitemaps turns sitemaps off. By default every job reads each
	// origin's sitemaps (robots.txt Sitemap: lines, /sitemap.xml, the
	// children of index files) before its pages, in the host's slot, and
	// queues the pages they list at the job's top level (sitemaps.go);
	// gzipped bodies (application/x-gzip, application/gzip,
	// application/octet-stream) are downloaded too, for gzipped sitemaps.
	NoSitemaps bool
	// Partitioned makes the node one of a fleet: it serves the partitions
	// it is given at run time (ServePartition, ReleasePartition; package
	// cluster/fleet drives them) and none at start. URLs it finds for a
	// partition it does not serve go to its outbox (internal/outbox) in the
	// batch of the completion that found them, for the owner; the owner
	// folds them in (Fold). A job of a partitioned node does not end when
	// the node's own queue empties (the fleet's may not be): it ends when
	// cancelled, or on a limit.
	Partitioned bool
	// SitemapEvery is how long a continuous job trusts the sitemaps it
	// read before it reads them again. Default DefaultSitemapEvery (24h).
	SitemapEvery time.Duration

	// OnFetch, if set, is called by the worker after every request it
	// sent (pages and robots.txt), before the page's completion: it must
	// be quick and must not block (metrics count, the dashboard ranks
	// hosts). Fetches answered from another job's page are not requests.
	OnFetch func(FetchEvent)

	// Logger receives the node's log. Default: discard.
	Logger *slog.Logger
	// Now is the clock of every decision the node makes (robots.txt
	// timing, give-up times, records). Default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.MinDelay == 0 {
		o.MinDelay = frontier.DefaultMinDelay
	}
	if o.MaxDelay == 0 {
		o.MaxDelay = frontier.DefaultMaxDelay
	}
	if o.MaxAdaptiveDelay == 0 {
		o.MaxAdaptiveDelay = frontier.DefaultMaxAdaptiveDelay
	}
	if o.HostBudget == 0 {
		o.HostBudget = DefaultHostBudget
	}
	if o.DuplicateAllowance == 0 {
		o.DuplicateAllowance = DefaultDuplicateAllowance
	}
	if o.SitemapEvery == 0 {
		o.SitemapEvery = DefaultSitemapEvery
	}
	if o.RecrawlTick == 0 {
		o.RecrawlTick = DefaultRecrawlTick
	}
	if o.FreshnessEvery == 0 {
		o.FreshnessEvery = DefaultFreshnessEvery
	}
	if o.NearResemblance == 0 {
		o.NearResemblance = DefaultNearResemblance
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = 5
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 2
	}
	if o.RobotsRetry == 0 {
		o.RobotsRetry = max(2*o.MinDelay, time.Second)
	}
	if o.WARCMaxSize == 0 {
		o.WARCMaxSize = warc.DefaultMaxFileSize
	}
	if o.MinSyncInterval == 0 {
		o.MinSyncInterval = DefaultMinSyncInterval
	}
	if o.FetchTimeout == 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = fetch.DefaultMaxBodyBytes
	}
	if o.MaxDecodedBytes == 0 {
		o.MaxDecodedBytes = fetch.DefaultMaxDecodedBytes
	}
	switch {
	case o.StopGrace == 0:
		o.StopGrace = 5 * time.Second
	case o.StopGrace < 0:
		o.StopGrace = 0
	}
	switch {
	case o.SharedPages == 0:
		o.SharedPages = 4096
	case o.SharedPages < 0:
		o.SharedPages = 0
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Validate reports every field of the node's own that is out of range.
// Open also validates the options it derives for each part (fetcher,
// frontier, robots keeper, WARC writer) before it touches DataDir.
func (o Options) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("node: option %s = %v: %s", field, v, why))
	}
	if o.Concurrency < 0 || o.Concurrency > 10000 {
		bad("Concurrency", o.Concurrency, "want 1..10000")
	}
	if o.UserAgent != "" && robots.ProductToken(o.UserAgent) == "" {
		bad("UserAgent", o.UserAgent, "must start with a product token of letters, '-' or '_'")
	}
	if !frontier.ValidMaxDelay(o.MinDelay, o.MaxDelay) {
		bad("MaxDelay", o.MaxDelay, "negative or below MinDelay")
	}
	if o.MaxAdaptiveDelay < 0 {
		bad("MaxAdaptiveDelay", o.MaxAdaptiveDelay, "negative")
	}
	if o.HostBudget < 0 {
		bad("HostBudget", o.HostBudget, "negative")
	}
	if o.NearResemblance > 1 {
		bad("NearResemblance", o.NearResemblance, "over 1")
	}
	if o.SitemapEvery < 0 {
		bad("SitemapEvery", o.SitemapEvery, "negative")
	}
	if o.RecrawlTick < 0 {
		bad("RecrawlTick", o.RecrawlTick, "negative")
	}
	if o.FreshnessEvery < 0 {
		bad("FreshnessEvery", o.FreshnessEvery, "negative")
	}
	if o.MaxRedirects < 0 {
		bad("MaxRedirects", o.MaxRedirects, "negative")
	}
	if o.MaxRetries < 0 {
		bad("MaxRetries", o.MaxRetries, "negative")
	}
	if o.RobotsRetry < 0 {
		bad("RobotsRetry", o.RobotsRetry, "negative")
	}
	if o.WARCMaxSize < 0 {
		bad("WARCMaxSize", o.WARCMaxSize, "negative")
	}
	if o.FetchTimeout < 0 {
		bad("FetchTimeout", o.FetchTimeout, "negative")
	}
	if o.MaxBodyBytes < 0 {
		bad("MaxBodyBytes", o.MaxBodyBytes, "negative")
	}
	if o.MaxDecodedBytes < 0 {
		bad("MaxDecodedBytes", o.MaxDecodedBytes, "negative")
	}
	return errors.Join(errs...)
}
