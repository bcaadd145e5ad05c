package node

import (
	"net/url"
	"sync"
	"time"
)

// sharedPage is what a fetch of a page left for other jobs that want the
// same URL: its status and where it leads (a redirect's target, or the
// links worth following), so that they count it and follow it through
// their own scope without a second request.
type sharedPage struct {
	at       time.Time // when the fetch began
	status   int
	redirect *url.URL   // a 3xx's target, nil otherwise
	links    []*url.URL // canonical, followable links of an HTML page
	text     textPrint  // its visible text's fingerprint, if read (for shape runs)
	// sitemap is what a sitemap file listed, for a sitemap held under
	// sitemapShareKey (nil for pages)
	sitemap *sitemapResult
}

// sitemapShareKey is the key in sharedPages of the sitemap file at url:
// apart from the page of the same URL, which a job may also fetch.
func sitemapShareKey(url string) string { return "sitemap " + url }

// sharedPages holds the last pages fetched while two or more jobs ran,
// at most max of them (first in, first out). Safe for concurrent use.
//
// A job's lease of a URL comes after any other job's completed fetch of
// it on the same host (one fetch in flight per host, and a fetch is put
// here before its lease completes), so a page wanted by two jobs is
// fetched once as long as it is still held here; past that (a full table,
// or a restart) it is fetched again, politely.
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
