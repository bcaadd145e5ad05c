package testweb

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Options shape a generated web. The zero value of every field means its
// default; Generate fills the defaults in one place (withDefaults).
type Options struct {
	// Seed drives every random choice: equal Options give equal webs.
	Seed int64
	// Hosts is the number of ordinary hosts, big ones included. Zero means 300.
	Hosts int
	// BigHosts is how many of Hosts are big. Zero means 3 (capped at Hosts);
	// negative means none.
	BigHosts int
	// BigPages is the number of regular HTML pages of a big host. Zero means 40.
	BigPages int
	// MinPages and MaxPages bound the regular HTML pages of a small host
	// (special resources such as redirects and robots probes come on top).
	// Zero means 3 and 15.
	MinPages, MaxPages int
	// MinPageBytes and MaxPageBytes bound the size of a regular HTML page.
	// Zero means 20 KiB and 60 KiB.
	MinPageBytes, MaxPageBytes int
	// ExtraLinks adds this many links to each regular page of an ordinary
	// host, beyond the few the web's shape needs: three in four to a page of
	// the same host, the rest to another host's. Real pages carry tens of
	// links (menus, related lists), most of them to pages already seen.
	// Zero adds none, and the web is the same as without it.
	ExtraLinks int
	// Latency and MaxLatency bound the per-host delay before the first byte
	// of every response; each host draws its own value once. Zero means 2 ms
	// and 20 ms; a negative Latency means no delay at all.
	Latency, MaxLatency time.Duration
	// Domain is the suffix of every host name. Zero means "trawl.test".
	Domain string
	// Port is the TCP port in every URL. Zero before Serve; Serve fills it
	// in. If set before Serve, Serve binds exactly this port.
	Port int
	// SharedIPHosts is how many small hosts share an IP address, in groups
	// of three (rounded down). Zero means Hosts/30 groups (at least one);
	// negative means every host has its own address.
	SharedIPHosts int
	// Hostile adds five hostile hosts (malformed HTML, lying Content-Length,
	// slow drip, endless body, broken gzip), linked from ordinary pages.
	Hostile bool
	// HostileKinds adds a hostile host for each kind named (see
	// AllHostileKinds and hostile.go: drips in the head, lying lengths,
	// huge heads, redirect loops and escapes, odd bytes and charsets,
	// hostile robots.txt, 429 and 503, resets, silence, bombs), linked
	// like Hostile's. Naming one of Hostile's five adds it alone. Nil
	// means none; an unknown name is a Validate error.
	HostileKinds []string
	// HostileRetryAfter is what the 429 kinds ask for in Retry-After, in
	// whole seconds. Zero means 120 s. A shorter wait judges the same
	// rule in a shorter test.
	HostileRetryAfter time.Duration
	// TLSKinds adds a host served over TLS for each kind named (see
	// AllTLSKinds and tls.go: an ordinary HTTPS host, an HTTP/2-only one,
	// and certificates expired, not yet valid, for another name,
	// self-signed and under an unknown root), after every other host and
	// linked from ordinary home pages. Their certificates come from a CA
	// made in memory at Generate (Web.CACertPEM). Nil means none; an
	// unknown name is a Validate error.
	TLSKinds []string
	// Traps adds the crawler traps, each on a few small hosts linked
	// from their home pages: session IDs in every internal link, a faceted
	// shop, a growing path and soft 404s (see HostInfo.Traps). The
	// calendar trap is always there.
	Traps bool
	// Lookalikes adds pairs of distinct pages built on one template
	// (shared boilerplate, different short text), labelled by
	// Page.LookalikeOf: hard cases for a near-duplicate detector.
	Lookalikes bool
	// Changing makes a web that changes (see change.go): each regular
	// page of an ordinary host changes hourly (5%), daily (15%), weekly
	// (20%), monthly (25%) or never (35%), as a Poisson process of that
	// mean interval from ChangeEpoch, its content a function of its
	// version; hosts send validators honestly (70%), omit them (10%),
	// send Last-Modified always now (7%), an ETag that changes on every
	// response (7%) or one ETag for every version (6%). The server takes
	// the time from ServeOptions.Now; Web.Version is the ground truth.
	// Pages that are duplicates or lookalikes, or have some, never change.
	// Hosts, pages and links are those of the same web without Changing.
	Changing bool
	// ChangeEpoch is when every page of a changing web is at version 0.
	// Zero means 2025-01-01 00:00 UTC.
	ChangeEpoch time.Time
	// ChangeRange, if its Max is set, replaces the change classes of a
	// changing web: a page never changes (Never percent of them) or
	// changes with a mean interval drawn log-uniform in [Min, Max].
	ChangeRange ChangeRange
	// Validators, if set, is every ordinary host's validator kind on a
	// changing web (ValidatorsHonest, ...) instead of the usual mix.
	Validators string
	// Sitemaps adds sitemaps (see sitemap.go): /sitemap.xml urlsets with
	// lastmod, sitemap indexes named in robots.txt with a gzipped child,
	// pages only a sitemap lists (Page.SitemapOnly), and one malformed,
	// one gzip-bomb and one cross-host sitemap. Off, the web is unchanged.
	Sitemaps bool
	// Pagination adds the paged host (pagination.go): a blog, a forum
	// thread, a catalogue and a docs tree whose pages link to pages of
	// their own URL shape, a store and a journal whose items and posts are
	// families of one URL pattern longer than 64, all crawlable, beside an events calendar and a
	// news listing that never end (TrapEvents, TrapEndlessPages). Made
	// after every other host: the rest of the web is unchanged.
	Pagination bool
	// NearDup makes the near-duplicate web instead (neardup.go): Hosts
	// hosts of articles with labelled near and exact copies, and
	// templated hosts whose distinct pages share most of their text.
	// Seed, Hosts, Latency, MaxLatency, Domain and Port apply; the options
	// that add hosts or pages to the classic web are errors with it.
	NearDup bool
}

// Defaults of Options, in one place.
const (
	defaultHosts        = 300
	defaultBigHosts     = 3
	defaultBigPages     = 40
	defaultMinPages     = 3
	defaultMaxPages     = 15
	defaultMinPageBytes = 20 << 10
	defaultMaxPageBytes = 60 << 10
	defaultLatency      = 2 * time.Millisecond
	defaultMaxLatency   = 20 * time.Millisecond
	defaultDomain       = "trawl.test"
)

// Page sizes of SmallPages.
const (
	smallMinPageBytes = 4 << 10
	smallMaxPageBytes = 12 << 10
)

// SmallPages returns o with regular pages of 4-12 KB instead of the
// default 20-60 KB, unless o sets a size of its own. It is for tests that
// judge a crawl's bookkeeping (gaps, coverage, repeats, the archive's
// records) rather than its work per byte: under the race detector a
// crawl's CPU grows with the bytes it parses, hashes and compresses (a
// 300-host node crawl took 93 CPU-seconds with the default sizes, 41 with
// these), and so does the server's, generating them.
func (o Options) SmallPages() Options {
	if o.MinPageBytes == 0 && o.MaxPageBytes == 0 {
		o.MinPageBytes, o.MaxPageBytes = smallMinPageBytes, smallMaxPageBytes
	}
	return o
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.Hosts == 0 {
		o.Hosts = defaultHosts
	}
	switch {
	case o.BigHosts == 0:
		o.BigHosts = min(defaultBigHosts, o.Hosts)
	case o.BigHosts < 0:
		o.BigHosts = 0
	}
	if o.BigPages == 0 {
		o.BigPages = defaultBigPages
	}
	if o.MinPages == 0 {
		o.MinPages = defaultMinPages
	}
	if o.MaxPages == 0 {
		o.MaxPages = max(defaultMaxPages, o.MinPages)
	}
	if o.HostileRetryAfter == 0 {
		o.HostileRetryAfter = retryAfter
	}
	if o.MinPageBytes == 0 {
		o.MinPageBytes = defaultMinPageBytes
	}
	if o.MaxPageBytes == 0 {
		o.MaxPageBytes = max(defaultMaxPageBytes, o.MinPageBytes)
	}
	switch {
	case o.Latency < 0:
		o.Latency, o.MaxLatency = 0, 0
	case o.Latency == 0 && o.MaxLatency == 0:
		o.Latency, o.MaxLatency = defaultLatency, defaultMaxLatency
	case o.MaxLatency == 0:
		o.MaxLatency = o.Latency
	}
	if o.Domain == "" {
		o.Domain = defaultDomain
	}
	o.Domain = strings.ToLower(o.Domain)
	switch {
	case o.SharedIPHosts == 0:
		o.SharedIPHosts = 3 * max(1, o.Hosts/30)
	case o.SharedIPHosts < 0:
		o.SharedIPHosts = 0
	}
	o.SharedIPHosts -= o.SharedIPHosts % 3
	if small := o.Hosts - o.BigHosts; o.SharedIPHosts > small {
		o.SharedIPHosts = small - small%3
	}
	return o
}

// Validate reports every bad field of o (after defaults) by name.
func (o Options) Validate() error {
	o = o.withDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("testweb: options: %s: %s", field, fmt.Sprintf(format, args...)))
	}
	if o.Hosts < 1 || o.Hosts > 40000 {
		bad("Hosts", "%d not in 1..40000", o.Hosts)
	}
	if o.BigHosts > o.Hosts {
		bad("BigHosts", "%d more than Hosts %d", o.BigHosts, o.Hosts)
	}
	if o.BigPages < 1 {
		bad("BigPages", "%d < 1", o.BigPages)
	}
	if o.MinPages < 1 {
		bad("MinPages", "%d < 1", o.MinPages)
	}
	if o.MaxPages < o.MinPages {
		bad("MaxPages", "%d < MinPages %d", o.MaxPages, o.MinPages)
	}
	if o.MinPageBytes < 1 {
		bad("MinPageBytes", "%d < 1", o.MinPageBytes)
	}
	if o.MaxPageBytes < o.MinPageBytes {
		bad("MaxPageBytes", "%d < MinPageBytes %d", o.MaxPageBytes, o.MinPageBytes)
	}
	if o.ExtraLinks < 0 || o.ExtraLinks > 1000 {
		bad("ExtraLinks", "%d not in 0..1000", o.ExtraLinks)
	}
	if cr := o.ChangeRange; cr != (ChangeRange{}) {
		switch {
		case !o.Changing:
			bad("ChangeRange", "set without Changing")
		case cr.Min <= 0 || cr.Max < cr.Min:
			bad("ChangeRange", "Min %v, Max %v: want 0 < Min <= Max", cr.Min, cr.Max)
		case cr.Never < 0 || cr.Never > 100:
			bad("ChangeRange", "Never %d%% not in 0..100", cr.Never)
		}
	}
	if v := o.Validators; v != "" {
		switch {
		case !o.Changing:
			bad("Validators", "set without Changing")
		case !slices.ContainsFunc(validatorKinds, func(k validatorKind) bool { return k.kind == v }):
			bad("Validators", "%q is not a validator kind", v)
		}
	}
	if o.MaxLatency < o.Latency {
		bad("MaxLatency", "%v < Latency %v", o.MaxLatency, o.Latency)
	}
	if o.Port < 0 || o.Port > 65535 {
		bad("Port", "%d not in 0..65535", o.Port)
	}
	for _, k := range o.HostileKinds {
		if hostileKindNamed(k) == notHostile {
			bad("HostileKinds", "unknown kind %q", k)
		}
	}
	if o.HostileRetryAfter < time.Second || o.HostileRetryAfter%time.Second != 0 {
		bad("HostileRetryAfter", "%v: want whole seconds, at least one", o.HostileRetryAfter)
	}
	for _, k := range o.TLSKinds {
		if tlsKindNamed(k) == notTLS {
			bad("TLSKinds", "unknown kind %q", k)
		}
	}
	if o.NearDup {
		for _, f := range []struct {
			name string
			set  bool
		}{{"Hostile", o.Hostile}, {"HostileKinds", len(o.HostileKinds) > 0}, {"TLSKinds", len(o.TLSKinds) > 0},
			{"Traps", o.Traps}, {"Lookalikes", o.Lookalikes}, {"Changing", o.Changing}, {"Sitemaps", o.Sitemaps},
			{"Pagination", o.Pagination}, {"ExtraLinks", o.ExtraLinks != 0}} {
			if f.set {
				bad(f.name, "not with NearDup, which makes a web of its own")
			}
		}
	}
	if strings.ContainsAny(o.Domain, "/:?#@ ") || strings.HasPrefix(o.Domain, ".") || strings.HasSuffix(o.Domain, ".") {
		bad("Domain", "%q is not a host name", o.Domain)
	}
	return errors.Join(errs...)
}
