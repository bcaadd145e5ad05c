// Package dedupbench is `trawl bench dedup`: it judges the content-seen
// gate from the crawl log alone. It serves the near-duplicate web
// (package testweb, labelled near and exact copies and templated hosts)
// from a child process (package benchweb), crawls it to the end with a
// node and store in this process, and scores the log against the web's
// labels: recall by edit size, false positives, coverage of templated
// hosts, CPU per page. With Options.Docs it crawls a directory tree
// served on loopback instead and lists every page flagged, with whether
// its visible text is its original's.
package dedupbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/bench/benchweb"
	"github.com/trawl-crawler/trawl/internal/procstat"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/links"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/simhash"
)

// Help is `trawl bench dedup --help`.
const Help = `usage: trawl bench dedup [flags]

Judges the content-seen gate from the crawl log alone. Serves the
near-duplicate web (labelled near copies of articles at edit sizes 0% to
10%, exact and cross-host copies, templated hosts whose distinct pages share
a long template) from a child process, crawls it to the end with a real node
and store, and reports recall by edit size, false positives among ordinary
and templated pages, the share of templated hosts' pages fetched, and the
crawler's CPU-ms per page.

With --docs DIR it serves a directory tree (say, HTML documentation) on
loopback, crawls it from its index, and lists every page flagged a
duplicate with its original: a flag is false unless the two pages' visible
text is the same.

Examples:
  trawl bench dedup
  trawl bench dedup --hosts 200 --seed 7 --json
  trawl bench dedup --docs /usr/share/doc/python3.11/html`

// Options are `trawl bench dedup`'s flags, and the trawl binary that
// serves the near-duplicate web.
type Options struct {
	Exe                string // the trawl binary, run as `trawl testweb`
	Seed               int64
	Hosts, Concurrency int
	Latency, MinDelay  time.Duration
	JSON               bool   // one JSON object instead of a table
	Docs               string // a directory tree to crawl instead of the web
}

// Main runs the bench, writes its report to stdout and its messages to
// stderr, and returns the exit code: 2 for bad options, 1 for a failure.
func Main(o Options, stdout, stderr io.Writer) int {
	if o.Docs != "" {
		if fi, err := os.Stat(o.Docs); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "trawl bench dedup: --docs %s: want a directory with an index.html\n", o.Docs)
			return 2
		}
		if _, err := os.Stat(filepath.Join(o.Docs, "index.html")); err != nil {
			fmt.Fprintf(stderr, "trawl bench dedup: --docs %s: no index.html in it: want the directory that holds the tree's index.html\n", o.Docs)
			return 2
		}
	}
	if err := (testweb.Options{NearDup: true, Hosts: o.Hosts}).Validate(); err != nil || o.Hosts < 1 {
		fmt.Fprintf(stderr, "trawl bench dedup: --hosts %d: want 1 to 40000\n", o.Hosts)
		return 2
	}
	if o.Concurrency < 1 || o.Latency < 0 || o.MinDelay < 0 {
		fmt.Fprintf(stderr, "trawl bench dedup: --concurrency %d, --latency %v, --min-delay %v: want at least 1 worker and no negative durations\n",
			o.Concurrency, o.Latency, o.MinDelay)
		return 2
	}
	dir, err := os.MkdirTemp("", "trawl-bench-dedup-")
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench dedup: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if o.Docs != "" {
		return mainDocs(&o, dir, stdout, stderr)
	}
	r, err := runWeb(&o, dir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench dedup: %v\n", err)
		return 1
	}
	if o.JSON {
		json.NewEncoder(stdout).Encode(r)
		return 0
	}
	r.Print(stdout)
	return 0
}

// crawled is what crawl measured.
type crawled struct {
	pages      int64
	seconds    float64
	cpuSeconds float64
	stopReason string
	log        []crawllog.Entry
}

// crawl crawls seeds with a real node and store in dataDir, to
// the end, and returns its crawl log and the CPU this process spent on it.
func crawl(dataDir string, seeds, domains []string, hosts map[string][]netip.Addr, o *Options) (*crawled, error) {
	md := o.MinDelay
	if md == 0 {
		md = -1
	}
	n, err := node.Open(node.Options{
		DataDir:     dataDir,
		MinDelay:    md,
		Concurrency: o.Concurrency,
		AllowNets:   []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Hosts:       hosts,
	})
	if err != nil {
		return nil, err
	}
	j, err := n.Submit(job.Spec{Seeds: seeds, Domains: domains, MaxDepth: 30, RobotsGiveUp: 4 * time.Second})
	if err != nil {
		n.Close()
		return nil, err
	}
	cpu0, start := procstat.SelfCPU(), time.Now()
	n.Start()
	<-j.Ended()
	err = errors.Join(j.Err(), n.Close())
	c := &crawled{seconds: time.Since(start).Seconds(), cpuSeconds: (procstat.SelfCPU() - cpu0).Seconds()}
	if err != nil {
		return nil, err
	}
	sum := n.Summary(j.ID)
	c.pages, c.stopReason = sum.Pages, sum.StopReason
	err = crawllog.Scan(filepath.Join(dataDir, "logs"), crawllog.Filter{}, func(e crawllog.Entry) error {
		c.log = append(c.log, e)
		return nil
	})
	return c, err
}

// runWeb serves the near-duplicate web from a child process, crawls
// it and scores the crawl log against the web's labels.
func runWeb(o *Options, dir string, stderr io.Writer) (*Result, error) {
	bw, err := benchweb.Start(benchweb.Options{Exe: o.Exe, Dir: dir, Seed: o.Seed, Hosts: o.Hosts,
		Latency: o.Latency, Lifetime: 30 * time.Minute, Stderr: stderr, Extra: []string{"--near-dup"}})
	if err != nil {
		return nil, err
	}
	defer bw.Stop()
	hostMap := bw.Hosts
	u, err := url.Parse(bw.Seeds[0])
	if err != nil {
		return nil, fmt.Errorf("synthetic web's seed %q: %w", bw.Seeds[0], err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return nil, fmt.Errorf("synthetic web's seed %q: no port", bw.Seeds[0])
	}
	// The same web, generated again here for its labels.
	web := testweb.Generate(testweb.Options{Seed: o.Seed, Hosts: o.Hosts, NearDup: true, Port: port})
	c, err := crawl(filepath.Join(dir, "data"), bw.Seeds, []string{web.Options().Domain}, hostMap, o)
	if err != nil {
		return nil, err
	}
	r := score(web.Pages(), c.log)
	r.Seed, r.Hosts, r.CrawlPages, r.Seconds, r.CPUSeconds, r.StopReason = o.Seed, o.Hosts, c.pages, c.seconds, c.cpuSeconds, c.stopReason
	if c.pages > 0 {
		r.CPUMsPerPage = c.cpuSeconds * 1000 / float64(c.pages)
	}
	r.FingerprintUs, r.ExtractUs = fingerprintCost(web)
	return r, nil
}

// fingerprintCost measures, in this process, what the near-duplicate
// gate's fingerprint costs a page of web: the CPU µs per HTML page that
// link extraction spends more when it also reads the main text
// (links.Options.SimHash) plus the print with the host's template
// (simhash.Content.PrintWith), beside the µs of extraction without it.
// Each is the least of three passes over every page, the machine being
// shared.
func fingerprintCost(web *testweb.Web) (fingerprintUs, extractUs float64) {
	type page struct {
		host string
		body []byte
	}
	var pages []page
	for _, p := range web.Pages() {
		b, ok := web.Body(p.URL)
		u, err := url.Parse(p.URL)
		if ok && err == nil && bytes.Contains(b[:min(len(b), 512)], []byte("<html")) {
			pages = append(pages, page{u.Host, b})
		}
	}
	if len(pages) == 0 {
		return 0, 0
	}
	// pass returns the least CPU µs per page of three passes, each with the
	// function newPass gives.
	pass := func(newPass func() func(page)) float64 {
		best := math.Inf(1)
		for range 3 {
			fn := newPass()
			start := procstat.SelfCPU()
			for _, p := range pages {
				fn(p)
			}
			best = min(best, (procstat.SelfCPU() - start).Seconds())
		}
		return best * 1e6 / float64(len(pages))
	}
	plain := pass(func() func(page) {
		return func(p page) { links.ExtractWith(p.body, links.Options{}) }
	})
	with := pass(func() func(page) {
		templates := map[string]*simhash.Template{} // learned as a crawl does
		return func(p page) {
			t := templates[p.host]
			if t == nil {
				t = new(simhash.Template)
				templates[p.host] = t
			}
			c := links.ExtractWith(p.body, links.Options{SimHash: true}).Content
			c.PrintWith(t)
			t.Add(c)
		}
	})
	return max(with-plain, 0), plain
}

// Result is what `trawl bench dedup --json` prints for the
// near-duplicate web.
type Result struct {
	Seed  int64 `json:"seed"`
	Hosts int   `json:"hosts"`
	// WebPages is the pages of the web; Fetched how many of them the crawl
	// fetched (status 200); CrawlPages the crawl's pages, as it counts them.
	WebPages   int   `json:"web_pages"`
	Fetched    int   `json:"fetched"`
	CrawlPages int64 `json:"crawl_pages"`
	// BySize is the recall of near copies on their original's host, by
	// edit size; CrossHost that of copies on another host; Exact that of
	// exact copies (Caught: flagged exact or near; CaughtExact: exact).
	BySize    []Recall `json:"by_edit_size"`
	CrossHost Recall   `json:"cross_host"`
	Exact     Recall   `json:"exact"`
	// WrongOriginal counts copies flagged against a page outside their
	// group (neither their original nor another copy of it).
	WrongOriginal int `json:"wrong_original"`
	// Ordinary are the distinct pages of article hosts (home pages and
	// originals), Templated the pages of templated hosts: a flag against
	// a page outside the page's group is a false positive.
	Ordinary  Distinct `json:"ordinary"`
	Templated Distinct `json:"templated"`
	// FalsePositiveRate is the flagged share of the ordinary and
	// templated pages fetched.
	FalsePositiveRate float64 `json:"false_positive_rate"`
	Seconds           float64 `json:"seconds"`
	CPUSeconds        float64 `json:"cpu_s"`
	CPUMsPerPage      float64 `json:"cpu_ms_per_page"`
	StopReason        string  `json:"stop_reason"`
	// FingerprintUs is the CPU µs per HTML page the gate's fingerprint
	// costs (main text, template, print), measured after the crawl on the
	// web's pages; ExtractUs that of link extraction without it.
	FingerprintUs float64 `json:"fingerprint_us_per_page"`
	ExtractUs     float64 `json:"extract_us_per_page"`
}

// Recall is the recall of one kind of copy.
type Recall struct {
	EditSize    float64 `json:"edit_size"`
	Copies      int     `json:"copies"`
	Fetched     int     `json:"fetched"`
	Caught      int     `json:"caught"`
	CaughtExact int     `json:"caught_exact,omitempty"`
	Recall      float64 `json:"recall"`
}

// Distinct is the false positives among one kind of distinct page.
type Distinct struct {
	Pages    int     `json:"pages"`
	Fetched  int     `json:"fetched"`
	Flagged  int     `json:"flagged"`
	Rate     float64 `json:"rate"`
	Coverage float64 `json:"coverage"` // Fetched / Pages
}

// score judges a crawl log against the near-duplicate web's labels.
// An original and its copies are a group. A copy is caught if the crawl
// flagged it (exact or near) against a page of its group, or flagged its
// original against it (the copy came first); only fetched copies count.
func score(pages []testweb.Page, log []crawllog.Entry) *Result {
	fetched := map[string]bool{}
	flag := map[string]crawllog.Entry{}
	for _, e := range log {
		if e.Robots || e.Dropped != "" || e.Status != http.StatusOK {
			continue
		}
		fetched[e.URL] = true
		if (e.Dedup == crawllog.DedupNear || e.Dedup == crawllog.DedupExact) && e.Original != "" {
			flag[e.URL] = e
		}
	}
	group := map[string]string{}
	for _, p := range pages {
		switch {
		case p.NearDuplicateOf != "":
			group[p.URL] = p.NearDuplicateOf
		case p.DuplicateOf != "":
			group[p.URL] = p.DuplicateOf
		default:
			group[p.URL] = p.URL
		}
	}
	inGroup := func(u string) bool { f, ok := flag[u]; return ok && group[f.Original] == group[u] }
	r := &Result{WebPages: len(pages)}
	bySize := map[float64]*Recall{}
	for _, e := range testweb.NearEditSizes {
		bySize[e] = &Recall{EditSize: e}
	}
	for _, p := range pages {
		if fetched[p.URL] {
			r.Fetched++
		}
		var row *Recall
		orig := p.NearDuplicateOf + p.DuplicateOf
		switch {
		case p.NearChange == testweb.NearChangeCrossHost:
			row = &r.CrossHost
		case p.NearDuplicateOf != "":
			if row = bySize[p.EditSize]; row == nil {
				row = &Recall{EditSize: p.EditSize}
				bySize[p.EditSize] = row
			}
		case p.DuplicateOf != "":
			row = &r.Exact
		default:
			fp := &r.Ordinary
			if p.Templated {
				fp = &r.Templated
			}
			fp.Pages++
			if fetched[p.URL] {
				fp.Fetched++
				if _, ok := flag[p.URL]; ok && !inGroup(p.URL) {
					fp.Flagged++
				}
			}
			continue
		}
		row.Copies++
		if !fetched[p.URL] {
			continue
		}
		row.Fetched++
		switch f, ok := flag[p.URL]; {
		case inGroup(p.URL):
			row.Caught++
			if f.Dedup == crawllog.DedupExact {
				row.CaughtExact++
			}
		case ok:
			r.WrongOriginal++
		case flag[orig].Original == p.URL:
			row.Caught++
			if flag[orig].Dedup == crawllog.DedupExact {
				row.CaughtExact++
			}
		}
	}
	for _, e := range slices.Sorted(func(yield func(float64) bool) {
		for e := range bySize {
			if !yield(e) {
				return
			}
		}
	}) {
		r.BySize = append(r.BySize, *bySize[e])
	}
	for _, row := range append([]*Recall{&r.CrossHost, &r.Exact}, ptrs(r.BySize)...) {
		row.Recall = ratio(row.Caught, row.Fetched)
	}
	for _, fp := range []*Distinct{&r.Ordinary, &r.Templated} {
		fp.Rate, fp.Coverage = ratio(fp.Flagged, fp.Fetched), ratio(fp.Fetched, fp.Pages)
	}
	r.FalsePositiveRate = ratio(r.Ordinary.Flagged+r.Templated.Flagged, r.Ordinary.Fetched+r.Templated.Fetched)
	return r
}

func ptrs[T any](s []T) []*T {
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

// ratio is a/b, or 0 if b is 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Print writes r as a table.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "near-duplicate web, seed %d, %d hosts: %d pages, %d fetched (crawl: %d pages, %s)\n",
		r.Seed, r.Hosts, r.WebPages, r.Fetched, r.CrawlPages, r.StopReason)
	fmt.Fprintf(w, "  %-26s %7s %7s %7s %7s\n", "copies", "copies", "fetched", "caught", "recall")
	for _, row := range r.BySize {
		fmt.Fprintf(w, "  %-26s %7d %7d %7d %7.3f\n", fmt.Sprintf("same host, %g%% of words", row.EditSize*100), row.Copies, row.Fetched, row.Caught, row.Recall)
	}
	fmt.Fprintf(w, "  %-26s %7d %7d %7d %7.3f\n", "cross host, same words", r.CrossHost.Copies, r.CrossHost.Fetched, r.CrossHost.Caught, r.CrossHost.Recall)
	fmt.Fprintf(w, "  %-26s %7d %7d %7d %7.3f (%d as exact)\n", "exact", r.Exact.Copies, r.Exact.Fetched, r.Exact.Caught, r.Exact.Recall, r.Exact.CaughtExact)
	fmt.Fprintf(w, "  copies flagged against a page outside their group: %d\n", r.WrongOriginal)
	fmt.Fprintf(w, "  %-26s %7s %7s %7s %7s %8s\n", "distinct pages", "pages", "fetched", "flagged", "rate", "coverage")
	for _, x := range []struct {
		name string
		f    Distinct
	}{{"ordinary", r.Ordinary}, {"templated hosts", r.Templated}} {
		fmt.Fprintf(w, "  %-26s %7d %7d %7d %7.3f %8.3f\n", x.name, x.f.Pages, x.f.Fetched, x.f.Flagged, x.f.Rate, x.f.Coverage)
	}
	fmt.Fprintf(w, "  false positives            %.4f of ordinary and templated pages fetched\n", r.FalsePositiveRate)
	fmt.Fprintf(w, "  fingerprint                %.0f us/page of CPU (main text, template, print), beside %.0f us/page for link extraction alone\n", r.FingerprintUs, r.ExtractUs)
	fmt.Fprintf(w, "  CPU                        %.2f s in %.2f s, %.3f CPU-ms/page (crawler process; the web is served by another)\n",
		r.CPUSeconds, r.Seconds, r.CPUMsPerPage)
}

// DocsFlag is a page of a --docs tree the crawl flagged.
type DocsFlag struct {
	URL       string `json:"url"`
	Original  string `json:"original"`
	Dedup     string `json:"dedup"`
	SameText  bool   `json:"same_text"`
	TextWords int    `json:"text_words"` // words of the page's visible text
}

// DocsResult is what `trawl bench dedup --docs DIR --json` prints.
type DocsResult struct {
	Dir            string     `json:"dir"`
	Fetched        int        `json:"fetched"`      // responses with status 200
	HTMLFetched    int        `json:"html_fetched"` // of them text/html
	Flagged        []DocsFlag `json:"flagged"`
	FalsePositives int        `json:"false_positives"` // flags whose pages' visible text differs
	CPUSeconds     float64    `json:"cpu_s"`           // the crawler's and the file server's: one process
	CPUMsPerPage   float64    `json:"cpu_ms_per_page"`
	StopReason     string     `json:"stop_reason"`
}

// docsHost is the name the --docs tree is served under.
const docsHost = "docs.test"

// mainDocs serves o.Docs on loopback, crawls it from its index and
// lists the pages flagged duplicates.
func mainDocs(o *Options, dir string, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench dedup: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(o.Docs)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	seed := fmt.Sprintf("http://%s:%d/", docsHost, port)
	c, err := crawl(filepath.Join(dir, "data"), []string{seed}, []string{docsHost},
		map[string][]netip.Addr{docsHost: {netip.MustParseAddr("127.0.0.1")}}, o)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench dedup: %v\n", err)
		return 1
	}
	r := DocsResult{Dir: o.Docs, CPUSeconds: c.cpuSeconds, StopReason: c.stopReason}
	if c.pages > 0 {
		r.CPUMsPerPage = c.cpuSeconds * 1000 / float64(c.pages)
	}
	for _, e := range c.log {
		if e.Robots || e.Dropped != "" || e.Status != http.StatusOK {
			continue
		}
		r.Fetched++
		if e.MIME == "text/html" {
			r.HTMLFetched++
		}
		if e.Dedup != crawllog.DedupNear && e.Dedup != crawllog.DedupExact {
			continue
		}
		t1, err1 := docsText(o.Docs, e.URL)
		t2, err2 := docsText(o.Docs, e.Original)
		if err := errors.Join(err1, err2); err != nil {
			fmt.Fprintf(stderr, "trawl bench dedup: %v\n", err)
			return 1
		}
		f := DocsFlag{URL: e.URL, Original: e.Original, Dedup: e.Dedup, SameText: t1 == t2, TextWords: len(strings.Fields(t1))}
		if !f.SameText {
			r.FalsePositives++
		}
		r.Flagged = append(r.Flagged, f)
	}
	if o.JSON {
		json.NewEncoder(stdout).Encode(r)
		return 0
	}
	fmt.Fprintf(stdout, "%s served on loopback: %d pages fetched (%d HTML), %s\n", r.Dir, r.Fetched, r.HTMLFetched, r.StopReason)
	fmt.Fprintf(stdout, "  flagged %d, false positives %d (visible text not the same)\n", len(r.Flagged), r.FalsePositives)
	for _, f := range r.Flagged {
		verdict := "FALSE: text differs"
		if f.SameText {
			verdict = "same text"
		}
		fmt.Fprintf(stdout, "  %-5s %s\n        of %s (%d words; %s)\n", f.Dedup, f.URL, f.Original, f.TextWords, verdict)
	}
	fmt.Fprintf(stdout, "  CPU %.2f s, %.3f CPU-ms/page (crawler and file server in one process)\n", r.CPUSeconds, r.CPUMsPerPage)
	return 0
}

// docsText is the visible text of the file under root that rawURL names
// (a directory's index.html for a path ending in /): the text outside
// head, script, style and template elements, its white space collapsed.
func docsText(root, rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("flagged URL %q: %w", rawURL, err)
	}
	p := path.Clean("/" + u.Path)
	if strings.HasSuffix(u.Path, "/") {
		p = path.Join(p, "index.html")
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		return "", fmt.Errorf("flagged URL %q: %w", rawURL, err)
	}
	return visibleText(data), nil
}

// visibleText is the text of an HTML document a reader sees: text
// outside head, script, style, noscript and template, white space
// collapsed.
func visibleText(doc []byte) string {
	z := html.NewTokenizer(bytes.NewReader(doc))
	var words []string
	hidden := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.Join(words, " ")
		case html.StartTagToken:
			if name, _ := z.TagName(); hiddenTag(string(name)) {
				hidden++
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); hiddenTag(string(name)) && hidden > 0 {
				hidden--
			}
		case html.TextToken:
			if hidden == 0 {
				words = append(words, strings.Fields(string(z.Text()))...)
			}
		}
	}
}

func hiddenTag(name string) bool {
	switch name {
	case "head", "script", "style", "noscript", "template":
		return true
	}
	return false
}
