package node

import (
	"net/url"
	"sync"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/job"
)

// Sharing between the jobs of a node. A URL that two jobs want is fetched
// once: the second job takes the first one's fetch, which counts as its
// page, and follows where it led through its own scope and seen gate.
//
// A page's fetch is kept in the URL's durable record (urlstate.Record's
// Leads, written in the completion batch with the rest of the record)
// whenever another job of the node has not ended, running or paused, so
// that a job paused meanwhile, or a node restarted, still takes it. A job
// takes the last fetch of a URL by another job when it began at or after
// the taking job was created; a continuous job only when it is also
// younger than the job's shortest recrawl interval (takes). A job's lease
// of a URL comes after any other job's completed fetch of it on the same
// host (one fetch in flight per host), so the record is there when it is
// read.
//
// Sitemap files are shared in memory only (sharedPages): a job paused
// while another read them takes them, a restart forgets them.

// sharedPage is what a fetch left for other jobs that want the same URL:
// its status and where it leads (a redirect's target, or the links worth
// following), so that they count it and follow it through their own scope
// without a second request.
type sharedPage struct {
	at       time.Time // when the fetch began
	status   int
	redirect *url.URL   // a 3xx's target, nil otherwise
	links    []*url.URL // canonical, followable links of an HTML page
	// requisites are what the page embeds, or a stylesheet refers to,
	// canonical (for a job that fetches requisites; not shared: a job
	// that takes the page from another fetches none of them)
	requisites []*url.URL
	text       textPrint // its visible text's fingerprint, if read (for shape runs)
	// sitemap is what a sitemap file listed, for a sitemap held under
	// sitemapShareKey (nil for pages)
	sitemap *sitemapResult
}

// leads is where p leads, for the URL's record (urlstate.Record.Leads).
func (p *sharedPage) leads() []string {
	if p.redirect != nil {
		return []string{p.redirect.String()}
	}
	out := make([]string, len(p.links))
	for i, u := range p.links {
		out[i] = u.String()
	}
	return out
}

// isRedirect reports whether a response of status led to a Location.
func isRedirect(status int) bool {
	return status >= 300 && status < 400 && status != 304
}

// pageOf is the page rec's last fetch left: its leads parsed (a lead
// that does not parse, which a record written by this code never holds,
// is left out).
func pageOf(rec urlstate.Record) *sharedPage {
	p := &sharedPage{at: rec.LastFetch, status: rec.Status}
	for _, s := range rec.Leads {
		u, err := url.Parse(s)
		if err != nil {
			continue
		}
		if isRedirect(rec.Status) {
			p.redirect = u
			break
		}
		p.links = append(p.links, u)
	}
	return p
}

// takes reports whether job j, wanting a URL whose record is rec, takes
// the record's fetch instead of fetching the URL: the fetch was another
// job's, it kept its leads, it began at or after j was created and, if
// maxAge is not 0, less than maxAge before now.
func takes(j *job.Job, rec urlstate.Record, maxAge time.Duration, now time.Time) bool {
	return rec.HasLeads && rec.Status != 0 && rec.Job != j.ID &&
		!rec.LastFetch.Before(j.Created) && (maxAge == 0 || now.Sub(rec.LastFetch) < maxAge)
}

// maxShareAge is the oldest fetch job j takes from another job: any since
// j was created (0) for a one-off job; for a continuous one, younger than
// its shortest recrawl interval, as j would not fetch the page again
// sooner either (and a copy it took is not taken again at its recrawl).
func (n *Node) maxShareAge(j *job.Job) time.Duration {
	if p := n.recrawl.plan(j); p != nil {
		return p.policy.Options().MinInterval
	}
	return 0
}

// sharedCopy returns the fetch of it's URL by another job that job j
// takes instead of fetching it, and the URL's record; nil if none. A host
// task (robots.txt and sitemaps) is never a page to take.
func (n *Node) sharedCopy(j *job.Job, it frontier.Item) (*sharedPage, urlstate.Record) {
	if n.opts.SharedPages == 0 || isHostTaskURL(it.URL) || !n.othersExist(j) {
		return nil, urlstate.Record{}
	}
	rec := n.loadRecord(it)
	if j.Spec.Requisites != "" || !takes(j, rec, n.maxShareAge(j), n.opts.Now()) { // a shared page brings no requisites
		return nil, rec
	}
	return pageOf(rec), rec
}

// othersExist reports whether the node holds a job other than j, ended
// or not: a job that ended may have fetched what j wants.
func (n *Node) othersExist(j *job.Job) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, mine := n.jobs[j.ID]
	return len(n.jobs) > 1 || len(n.jobs) == 1 && !mine
}

// othersLive reports whether a job of the node other than j has not
// ended (running or paused): it may want what j fetches.
func (n *Node) othersLive(j *job.Job) bool {
	return n.opts.SharedPages != 0 && n.othersNotEnded(j)
}

// othersNotEnded reports whether a job of the node other than j is
// running or paused.
func (n *Node) othersNotEnded(j *job.Job) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for id, o := range n.jobs {
		if id == j.ID {
			continue
		}
		if st, _ := o.State(); !st.Ended() {
			return true
		}
	}
	return false
}

// sitemapShareKey is the key in sharedPages of the sitemap file at url:
// apart from the page of the same URL, which a job may also fetch.
func sitemapShareKey(url string) string { return "sitemap " + url }

// sharedPages holds the last sitemap files read while other jobs had not
// ended, at most max of them (first in, first out). Safe for concurrent
// use.
type sharedPages struct {
	mu    sync.Mutex
	max   int
	pages map[string]*sharedPage
	order []string // ring of the URLs held, oldest at next
	next  int
}

func newSharedPages(max int) *sharedPages {
	return &sharedPages{max: max, pages: make(map[string]*sharedPage)}
}

// put holds p as the page at url, dropping the oldest page if full.
func (s *sharedPages) put(url string, p *sharedPage) {
	if s.max <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pages[url]; ok {
		s.pages[url] = p
		return
	}
	if len(s.order) < s.max {
		s.order = append(s.order, url)
	} else {
		delete(s.pages, s.order[s.next])
		s.order[s.next] = url
		s.next = (s.next + 1) % s.max
	}
	s.pages[url] = p
}

// get returns the page held for url, or nil.
func (s *sharedPages) get(url string) *sharedPage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pages[url]
}
