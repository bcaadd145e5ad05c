package crawl

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"time"
)

// DefaultUserAgent names the crawler and where to learn about it. Its
// product token ("trawl") is what robots.txt groups are matched against.
const DefaultUserAgent = "trawl/0.1 (+https://github.com/trawl-crawler/trawl)"

// Options configures a crawl. A zero field takes the default named.
type Options struct {
	// Seeds are the URLs the crawl starts from.
	Seeds []string
	// DataDir holds the crawl's output: warc/ and summary.json.
	// Default "./trawl-data".
	DataDir string
	// Domains limits the crawl to these hosts and their subdomains.
	// Default: the seeds' hosts.
	Domains []string
	// MaxDepth is the most links followed from a seed; 0 means no limit.
	MaxDepth int
	// MaxShapeRun caps consecutive links between URLs of one shape, the
	// mark of calendars and other endless page families (scope.Rules).
	// Default scope.DefaultMaxShapeRun; negative means no cap.
	MaxShapeRun int
	// MaxPages stops the crawl after this many page fetches (robots.txt
	// fetches do not count); 0 means no limit.
	MaxPages int
	// MinDelay is the least gap between two fetches to one host.
	// Default 1s; negative means no minimum (Crawl-delay, ten times the
	// response time and backoff still apply).
	MinDelay time.Duration
	// MaxDelay is the longest gap kept between two fetches to one host: it
	// caps Crawl-delay (itself capped at robots.MaxCrawlDelay) and backoff.
	// After a crash that lost a host's robots.txt answer, and so its
	// Crawl-delay, the host is left alone for min(MaxDelay,
	// robots.MaxCrawlDelay) from the lost request. Default 10m.
	MaxDelay time.Duration
	// Concurrency is the number of fetch workers. Default 64.
	Concurrency int
	// UserAgent is the User-Agent header; its product token (up to the
	// first "/" or space) is matched against robots.txt. It should carry a
	// contact URL. Default DefaultUserAgent.
	UserAgent string
	// AllowNets lets the crawler connect to addresses the IP guard would
	// refuse (loopback, private, link-local, metadata).
	AllowNets []netip.Prefix
	// Hosts maps host names to addresses before DNS is asked (the synthetic
	// web uses it). Keys are lower-case.
	Hosts map[string][]netip.Addr
	// HostBudget is the most pages fetched from one host. Default 10000.
	HostBudget int
	// MaxRedirects caps a redirect chain. Default 5.
	MaxRedirects int
	// MaxRetries is how often a URL is retried after a 429, 503 or network
	// failure before it is given up. Default 2.
	MaxRetries int
	// RobotsAttempts is how many times an unavailable robots.txt is fetched
	// before the host's queue is dropped. Default 4.
	RobotsAttempts int
	// WARCMaxSize rotates WARC files at this size. Default 1 GiB.
	WARCMaxSize int64
	// FetchTimeout bounds a whole fetch. Default 60s.
	FetchTimeout time.Duration
	// StopGrace is how long the fetches in flight when Run's context is
	// cancelled may take to finish before they are cut off. Default 5s;
	// negative means none.
	StopGrace time.Duration
	// MaxBodyBytes caps a response body as transferred. Default 10 MiB.
	MaxBodyBytes int64
	// Fresh deletes the crawl state (DataDir/state) before starting; WARC
	// files are kept. Without it, a data directory holding an earlier crawl
	// resumes that crawl.
	Fresh bool
	// ExpectedURLs sizes the URL-seen Bloom filter. Default 10 million.
	ExpectedURLs uint
	// Logger receives the crawl's log. Default: discard.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.DataDir == "" {
		o.DataDir = "./trawl-data"
	}
	if o.MinDelay == 0 {
		o.MinDelay = time.Second
	}
	if o.MaxDelay == 0 {
		o.MaxDelay = 10 * time.Minute
	}
	if o.Concurrency == 0 {
		o.Concurrency = 64
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.HostBudget == 0 {
		o.HostBudget = 10000
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = 5
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 2
	}
	if o.RobotsAttempts == 0 {
		o.RobotsAttempts = 4
	}
	if o.WARCMaxSize == 0 {
		o.WARCMaxSize = 1 << 30
	}
	if o.FetchTimeout == 0 {
		o.FetchTimeout = 60 * time.Second
	}
	switch {
	case o.StopGrace == 0:
		o.StopGrace = 5 * time.Second
	case o.StopGrace < 0:
		o.StopGrace = 0
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = 10 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Validate reports every field that is out of range.
func (o Options) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("crawl: option %s = %v: %s", field, v, why))
	}
	if len(o.Seeds) == 0 {
		bad("Seeds", "[]", "at least one seed is needed")
	}
	if o.MaxDepth < 0 {
		bad("MaxDepth", o.MaxDepth, "negative")
	}
	if o.MaxPages < 0 {
		bad("MaxPages", o.MaxPages, "negative")
	}
	if o.MaxDelay < 0 || (o.MaxDelay > 0 && o.MaxDelay < o.MinDelay) {
		bad("MaxDelay", o.MaxDelay, "negative or below MinDelay")
	}
	if o.Concurrency < 0 || o.Concurrency > 10000 {
		bad("Concurrency", o.Concurrency, "want 1..10000")
	}
	if o.UserAgent != "" && agentToken(o.UserAgent) == "" {
		bad("UserAgent", o.UserAgent, "must start with a product token of letters, '-' or '_'")
	}
	if o.HostBudget < 0 || o.MaxRedirects < 0 || o.MaxRetries < 0 || o.RobotsAttempts < 0 {
		bad("HostBudget/MaxRedirects/MaxRetries/RobotsAttempts", "", "negative")
	}
	if o.WARCMaxSize < 0 || o.MaxBodyBytes < 0 || o.FetchTimeout < 0 {
		bad("WARCMaxSize/MaxBodyBytes/FetchTimeout", "", "negative")
	}
	return errors.Join(errs...)
}

// agentToken is the robots.txt product token of a User-Agent value: its
// leading run of letters, '-' and '_' (RFC 9309 2.2.1), lower-cased.
func agentToken(ua string) string {
	end := strings.IndexFunc(ua, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_')
	})
	if end < 0 {
		end = len(ua)
	}
	return strings.ToLower(ua[:end])
}
