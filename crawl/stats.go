package crawl

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// stats are the crawl's counters, updated by workers without a shared lock
// except for the two maps.
type stats struct {
	start            time.Time
	pagesStarted     atomic.Int64 // page fetches begun (MaxPages counts these)
	pages            atomic.Int64 // page responses archived
	requests         atomic.Int64 // HTTP requests sent, robots.txt included
	robotsFetches    atomic.Int64
	robotsDisallowed atomic.Int64
	bytes            atomic.Int64
	queuedTotal      atomic.Int64
	outOfScope       atomic.Int64
	badLinks         atomic.Int64

	mu     sync.Mutex
	errors map[string]int64 // by class
	status map[string]int64 // "2xx", "3xx", ...
}

func (s *stats) addError(class string) {
	if class == "" {
		class = "other"
	}
	s.mu.Lock()
	s.errors[class]++
	s.mu.Unlock()
}

func (s *stats) addStatus(code int) {
	k := strconv.Itoa(code/100) + "xx"
	s.mu.Lock()
	s.status[k]++
	s.mu.Unlock()
}

// Progress is a snapshot of a running crawl.
type Progress struct {
	Elapsed          time.Duration    `json:"-"`
	ElapsedSeconds   float64          `json:"elapsed_s"`
	Pages            int64            `json:"pages"`             // page responses archived
	Requests         int64            `json:"requests"`          // HTTP requests, robots.txt included
	RobotsFetches    int64            `json:"robots_fetches"`    // robots.txt requests
	RobotsDisallowed int64            `json:"robots_disallowed"` // URLs not fetched because robots.txt disallows them
	Bytes            int64            `json:"bytes"`             // body bytes archived
	PagesPerSecond   float64          `json:"pages_per_s"`
	Discovered       int64            `json:"discovered"`   // distinct URLs queued, seeds included
	OutOfScope       int64            `json:"out_of_scope"` // links outside the scope or over a trap cap
	BadLinks         int64            `json:"bad_links"`    // links that did not parse
	Status           map[string]int64 `json:"status"`       // responses by status class
	Errors           map[string]int64 `json:"errors"`       // failures by class
	Queued           int              `json:"queued"`       // URLs still waiting
	InFlight         int              `json:"in_flight"`
	Hosts            int              `json:"hosts"`
	HostsReady       int              `json:"hosts_ready"`   // hosts with work that may be fetched now
	HostsWaiting     int              `json:"hosts_waiting"` // hosts with work waiting for their gap
	HostsBackoff     int              `json:"hosts_backoff"`
	Dropped          int              `json:"dropped"` // URLs dropped by host budgets or dead hosts
}

func (s *stats) snapshot() Progress {
	el := time.Since(s.start)
	p := Progress{
		Elapsed:          el,
		ElapsedSeconds:   el.Seconds(),
		Pages:            s.pages.Load(),
		Requests:         s.requests.Load(),
		RobotsFetches:    s.robotsFetches.Load(),
		RobotsDisallowed: s.robotsDisallowed.Load(),
		Bytes:            s.bytes.Load(),
		Discovered:       s.queuedTotal.Load(),
		OutOfScope:       s.outOfScope.Load(),
		BadLinks:         s.badLinks.Load(),
		Status:           map[string]int64{},
		Errors:           map[string]int64{},
	}
	if el > 0 {
		p.PagesPerSecond = float64(p.Pages) / el.Seconds()
	}
	s.mu.Lock()
	for k, v := range s.errors {
		p.Errors[k] = v
	}
	for k, v := range s.status {
		p.Status[k] = v
	}
	s.mu.Unlock()
	return p
}
