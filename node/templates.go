package node

import (
	"container/list"
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
}

// maxTemplateHosts bounds the hosts whose templates are kept: each holds
// at most simhash.MaxTemplateBlocks block counts (some 40 KiB at most,
// a few KiB for most hosts).
const maxTemplateHosts = 2048

type hostTemplate struct {
	host string
	t    simhash.Template
}

// print returns the print of a page of host (its main text c) with the
// host's template left out.
func (ts *templates) print(host string, c *simhash.Content) simhash.Print {
	var tmpl []uint64 // the page's template blocks, found under the lock
	ts.mu.Lock()
	if e, ok := ts.hosts[host]; ok {
		t := &e.Value.(*hostTemplate).t
		for _, b := range c.Blocks() {
			if t.Is(b.Hash) {
				tmpl = append(tmpl, b.Hash)
			}
		}
	}
	ts.mu.Unlock()
	if len(tmpl) == 0 {
		return c.Print(nil)
	}
	return c.Print(func(h uint64) bool {
		for _, x := range tmpl {
			if x == h {
				return true
			}
		}
		return false
	})
}

// add counts the blocks of a page of host judged distinct into the
// host's template.
func (ts *templates) add(host string, c *simhash.Content) {
	if len(c.Blocks()) == 0 {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.hosts == nil {
		ts.hosts = make(map[string]*list.Element)
	}
	e, ok := ts.hosts[host]
	if ok {
		ts.lru.MoveToFront(e)
	} else {
		if ts.lru.Len() >= maxTemplateHosts {
			old := ts.lru.Back()
			ts.lru.Remove(old)
			delete(ts.hosts, old.Value.(*hostTemplate).host)
		}
		e = ts.lru.PushFront(&hostTemplate{host: host})
		ts.hosts[host] = e
	}
	e.Value.(*hostTemplate).t.Add(c)
}
