package node

import (
	"net/http"
	"strings"
	"sync"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/job"
)

// Validators that lie. A host may answer 304 Not Modified to every
// conditional request whatever its page now holds: one strong ETag for
// every version of a page (computed from a template or a build, not the
// content), or a Last-Modified that never moves. A crawl that believes it
// keeps its first copy for ever and archives none of the page's later
// versions, and its schedule learns that the page never changes. So the
// node checks each host's validators now and then: a recrawl of a page
// whose last answer was a 304 is sent without validators; a full answer
// whose content changed (changedSince) while its validator stayed the
// same (the same strong ETag, or with no ETag the same Last-Modified)
// convicts the host, whose fetches are unconditional from then on. A
// host's checks grow rarer as its answers agree with their content: the
// second conditional recrawl of a page last found unchanged is one, then
// one after twice as many, up to one in 1 + 2^maxCheckDoubling;
// a host whose validators are seen to move with a change is checked at
// the rarest. Weak ETags are not judged: they may stay the same across a
// change by definition (RFC 9110 section 8.8.1).
//
// The verdicts live in the process: after a restart a host is checked
// again from the start. At most maxCheckedHosts hosts are remembered
// (about 100 bytes each); past that the hosts found honest are forgotten
// first.
type validatorChecks struct {
	mu    sync.Mutex
	hosts map[string]*hostValidators
}

// hostValidators is what the checks found of one host's validators.
type hostValidators struct {
	liar   bool
	agreed int // full answers whose validators agreed with their content, capped
	since  int // conditional recrawls of pages found unchanged since the last check
}

const (
	checkEvery       = 1
	maxCheckDoubling = 5 // the rarest check: one in 1 + 1<<5 = 33
	maxCheckedHosts  = 1 << 18
)

// validators returns the validators for job j's fetch of a page of host
// with record prev: none where validators(j, prev) gives none, for a
// convicted host, and for a check; else validators(j, prev).
func (c *validatorChecks) validators(j *job.Job, host string, prev urlstate.Record) fetch.Validators {
	v := validators(j, prev)
	if v == (fetch.Validators{}) {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[host]
	if h != nil && h.liar {
		return fetch.Validators{}
	}
	if prev.Status != http.StatusNotModified {
		return v
	}
	if h == nil {
		h = c.add(host)
	}
	h.since++
	if h.since > checkEvery<<min(h.agreed, maxCheckDoubling) {
		h.since = 0
		return fetch.Validators{}
	}
	return v
}

// observe judges host's validators by o, a whole and decoded response to a
// request without validators, of a page with record prev. (A 200 to a
// conditional request proves nothing: the server may have judged by
// another validator than the one it sent again.)
func (c *validatorChecks) observe(host string, prev urlstate.Record, o urlstate.Observation) {
	if o.Status < 200 || o.Status > 299 || o.NotModified || !o.HasDigest || !prev.HasDigest || prev.Status < 200 || prev.Status > 299 && prev.Status != http.StatusNotModified {
		return
	}
	o.ETag = urlstate.KeptValidator(o.ETag) // as the record keeps it
	same := sameValidator(prev, o)
	moved := !same && (o.ETag != "" && !weakETag(o.ETag) || o.ETag == "" && o.LastModified != "")
	if !same && !moved {
		return
	}
	changed := changedSince(prev, o)
	if same && o.ETag == "" && changed && o.SimHash != 0 && o.SimHash == prev.SimHash {
		// Last-Modified is a weak validator (RFC 9110 section 8.8.2):
		// markup that moved under the same visible text (a token, a
		// nonce) does not convict on it.
		changed = false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[host]
	if h == nil {
		h = c.add(host)
	}
	switch {
	case same && changed:
		h.liar = true
	case same:
		h.agreed = min(h.agreed+1, maxCheckDoubling)
	case changed: // the validator moved with the content
		h.agreed = maxCheckDoubling
	}
}

// liar reports whether host's validators were caught lying.
func (c *validatorChecks) liar(host string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[host]
	return h != nil && h.liar
}

func (c *validatorChecks) add(host string) *hostValidators {
	if len(c.hosts) >= maxCheckedHosts { // forget the hosts found honest first
		for k, h := range c.hosts {
			if !h.liar {
				delete(c.hosts, k)
			}
		}
	}
	if c.hosts == nil || len(c.hosts) >= maxCheckedHosts {
		c.hosts = make(map[string]*hostValidators)
	}
	h := &hostValidators{}
	c.hosts[host] = h
	return h
}

// sameValidator reports whether response o carries the validator prev
// kept: the same strong ETag, or, where neither has an ETag, the same
// Last-Modified.
func sameValidator(prev urlstate.Record, o urlstate.Observation) bool {
	if o.ETag != "" || prev.ETag != "" {
		return o.ETag != "" && !weakETag(o.ETag) && o.ETag == prev.ETag
	}
	return o.LastModified != "" && o.LastModified == prev.LastModified
}

func weakETag(t string) bool { return strings.HasPrefix(t, "W/") }
