package node

import (
	"container/list"
	"slices"
	"sync"

	"github.com/trawl-crawler/trawl/simhash"
)

// templates holds the hosts' templates (simhash.Template) the
// near-duplicate gate leaves out of a page's print, learned as the crawl
// reads the hosts' pages. They live in memory only: the templates of the
// maxTemplateHosts hosts read most recently are kept, and a host whose
// template was dropped, or read before a restart, learns it again from its
// next pages (simhash.TemplateMinPages), its pages judged by their main
// text alone meanwhile. Safe for concurrent use.
type templates struct {
	mu    sync.Mutex
	hosts map[string]*list.Element // of *hostTemplate, most recent first in lru
	lru   list.List
	// earlyBytes is the size of the main text the hosts' early pages
	// hold, at most maxEarlyBytes: past it, the early pages of the hosts
	// read least recently are let go (they are not entered again).
	earlyBytes int
	// withEarly lists the hosts that hold early pages (*hostTemplate), in
	// lru's order: the hosts whose pages are let go past maxEarlyBytes
	// are found without walking past the many that hold none.
	withEarly list.List
}

// maxEarlyBytes bounds the main text of early pages kept for reprints: a
// broad crawl reads a few pages of very many hosts.
const maxEarlyBytes = 32 << 20

// maxTemplateHosts bounds the hosts whose templates are kept: each holds
// at most simhash.MaxTemplateBlocks block counts (some 40 KiB at most,
// a few KiB for most hosts).
const maxTemplateHosts = 2048

type hostTemplate struct {
	host string
	t    simhash.Template
	// early are the pages the gate entered before the template was
	// learned: their prints hold the template, which a later copy's does
	// not, so once it is learned they are entered again without it
	// (reprint).
	early []earlyPage
	// inEarly is its element of templates.withEarly while early is not
	// empty; nil otherwise.
	inEarly *list.Element
}

// earlyPage is a page entered into the near-duplicate gate before its
// host's template was learned.
type earlyPage struct {
	url     string
	job     uint32
	content *simhash.Content
}

// reprint is a page to enter into the near-duplicate gate again, with the
// print its host's template, now learned, leaves it.
type reprint struct {
	url   string
	job   uint32
	print simhash.Print
}

// print returns the print of a page of host (its main text c) with the
// host's template left out.
func (ts *templates) print(host string, c *simhash.Content) simhash.Print {
	var tmpl []uint64 // the page's template blocks, found under the lock
	shared := false
	ts.mu.Lock()
	if e, ok := ts.hosts[host]; ok {
		t := &e.Value.(*hostTemplate).t
		for _, b := range c.Blocks() {
			if t.Is(b.Hash) {
				tmpl = append(tmpl, b.Hash)
			}
		}
		shared = c.SharedTitleIn(t)
	}
	ts.mu.Unlock()
	var p simhash.Print
	if len(tmpl) == 0 {
		p = c.Print(nil)
	} else {
		p = c.Print(func(h uint64) bool { return slices.Contains(tmpl, h) })
	}
	p.SharedTitle = shared
	return p
}

// add counts the blocks of a page of host judged distinct into the
// host's template. entered: the page's print is entered into the
// near-duplicate gate (as the page at url, archived by job). It returns
// the pages to enter again once the template is learned: those entered
// before, with its blocks left out (those left with fewer than minWords
// words are not). add takes c: it keeps it as an early page (released
// when let go) or releases it before it returns.
func (ts *templates) add(host string, c *simhash.Content, entered bool, url string, job uint32, minWords int) []reprint {
	if len(c.Blocks()) == 0 {
		c.Release()
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.hosts == nil {
		ts.hosts = make(map[string]*list.Element)
	}
	e, ok := ts.hosts[host]
	if ok {
		ts.lru.MoveToFront(e)
		if ht := e.Value.(*hostTemplate); ht.inEarly != nil {
			ts.withEarly.MoveToFront(ht.inEarly)
		}
	} else {
		if ts.lru.Len() >= maxTemplateHosts {
			old := ts.lru.Back()
			ts.dropEarly(old.Value.(*hostTemplate))
			ts.lru.Remove(old)
			delete(ts.hosts, old.Value.(*hostTemplate).host)
		}
		e = ts.lru.PushFront(&hostTemplate{host: host})
		ts.hosts[host] = e
	}
	ht := e.Value.(*hostTemplate)
	ht.t.Add(c)
	if ht.t.Pages() < simhash.TemplateMinPages {
		if entered {
			ht.early = append(ht.early, earlyPage{url: url, job: job, content: c})
			if ht.inEarly == nil {
				ht.inEarly = ts.withEarly.PushFront(ht) // ht is lru's front
			}
			ts.earlyBytes += c.Size()
			for ts.earlyBytes > maxEarlyBytes && ts.withEarly.Len() > 0 {
				ts.dropEarly(ts.withEarly.Back().Value.(*hostTemplate))
			}
			return nil
		}
		c.Release()
		return nil
	}
	c.Release()
	var out []reprint
	for _, p := range ht.early {
		pr := p.content.PrintWith(&ht.t)
		if pr.Words >= minWords && pr.Words < p.content.Words() {
			out = append(out, reprint{url: p.url, job: p.job, print: pr})
		}
	}
	ts.dropEarly(ht)
	return out
}

// dropEarly lets go of the early pages of ht (their text goes back to
// simhash's pools).
func (ts *templates) dropEarly(ht *hostTemplate) {
	for _, p := range ht.early {
		ts.earlyBytes -= p.content.Size()
		p.content.Release()
	}
	ht.early = nil
	if ht.inEarly != nil {
		ts.withEarly.Remove(ht.inEarly)
		ht.inEarly = nil
	}
}
