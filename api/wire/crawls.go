package wire

import (
	"encoding/json"
	"time"
)

// The crawl routes' bodies (/v1/crawls...).

// CrawlRequest is POST /v1/crawls's body. A key left out takes the crawl's
// default (job.Defaults): no name, the seeds' hosts, depth 20, no page
// limit, robots.txt given up after 15 s, priority 0, not continuous; so
// the zero fields a client leaves are not sent.
type CrawlRequest struct {
	Name     string   `json:"name,omitempty"`
	Seeds    []string `json:"seeds"`
	Scope    Scope    `json:"scope,omitzero"`
	Priority int      `json:"priority,omitempty"` // -1 (low), 0 or 1 (high)
	Limits   Limits   `json:"limits,omitzero"`
	// Continuous crawls never end by themselves: once every page is
	// fetched they recrawl each as its change rate calls for, within
	// Recrawl, until cancelled or the server stops.
	Continuous bool    `json:"continuous,omitempty"`
	Recrawl    Recrawl `json:"recrawl,omitzero"` // only for a continuous crawl (a 400 otherwise)
	// Requisites, if Reach is set, fetches and archives what each page
	// embeds.
	Requisites Requisites `json:"requisites,omitzero"`
	// Usage states what the crawl's content is for, and what to do with
	// pages whose site denies it.
	Usage Usage `json:"usage,omitzero"`
}

// Usage is a crawl's stated purpose (job.Spec.Purpose, OnDenied).
type Usage struct {
	Purpose  string `json:"purpose"`             // "archive", "search", "ai-train" or "ai-input"; "": none
	OnDenied string `json:"on_denied,omitempty"` // "mark" (the default) or "skip"
	// TDMRep reads each origin's /.well-known/tdmrep.json (one request a
	// day per origin) and records its rules; always with purpose "ai-train".
	TDMRep bool `json:"tdmrep,omitempty"`
}

// Requisites are a crawl's page requisites: the resources each page
// embeds (images, stylesheets and their imports and fonts, scripts,
// media, frames), fetched and archived like pages but not followed.
type Requisites struct {
	Reach   string `json:"reach"`              // "host", "site" (the page's registered domain) or "any"; "": none
	MaxHops int    `json:"max_hops,omitempty"` // most references from a page (page -> stylesheet -> font is 2); 0: 3
}

// Scope is where a crawl may go.
type Scope struct {
	Domains           []string `json:"domains,omitempty"`              // these domains and their subdomains
	MaxDepth          *int     `json:"max_depth,omitempty"`            // links followed from a seed; nil: the default, 20; 0: no limit
	MaxURLsPerPattern *int     `json:"max_urls_per_pattern,omitempty"` // URLs per host and URL pattern before its pages must earn room; nil or 0: the default; negative: no cap
	SessionParams     []string `json:"session_params,omitempty"`       // parameter names stripped before the URL-seen check; empty: the usual session ids
	KeepSessionIDs    bool     `json:"keep_session_ids,omitempty"`     // strip no session parameter
}

// Limits end a crawl early.
type Limits struct {
	MaxPages      int      `json:"max_pages,omitempty"`        // 0: no limit
	RobotsGiveUpS *float64 `json:"robots_give_up_s,omitempty"` // give up a host whose robots.txt stays unavailable this long; nil: the default, 15; 0: never
	MaxWaitS      *float64 `json:"max_wait_s,omitempty"`       // give up hosts that ask to wait longer, once nothing else is due; nil: the default, 30; 0: never
}

// Recrawl is a continuous crawl's recrawl bounds and budget, in a request
// and in a crawl's view; 0 takes the default.
type Recrawl struct {
	MinS          float64 `json:"min_s"`              // least time between two fetches of a page, in seconds; 0: an hour
	MaxS          float64 `json:"max_s"`              // most time between two fetches of a page; 0: 30 days
	BudgetPerHour float64 `json:"budget_per_hour"`    // recrawl fetches per hour; 0: no budget
	Schedule      string  `json:"schedule,omitempty"` // "freshness" (the default) or "nutch"
}

// Created is POST /v1/crawls's answer.
type Created struct {
	CrawlID uint32          `json:"crawl_id"`
	Raw     json.RawMessage `json:"-"` // the body as the server sent it
}

// Crawl is a crawl as the API shows it.
type Crawl struct {
	ID         uint32   `json:"id"`
	Name       string   `json:"name,omitempty"`
	State      string   `json:"state"` // running, paused, cancelled, finished, failed
	StopReason string   `json:"stop_reason,omitempty"`
	Seeds      []string `json:"seeds"`
	Domains    []string `json:"domains"`
	MaxDepth   int      `json:"max_depth"`
	MaxPages   int      `json:"max_pages"`
	Priority   int      `json:"priority"`
	// Continuous and Recrawl are set for a continuous crawl only.
	Continuous bool            `json:"continuous,omitempty"`
	Recrawl    *Recrawl        `json:"recrawl,omitempty"`
	Requisites *Requisites     `json:"requisites,omitempty"` // set for a crawl that fetches requisites only
	Usage      *Usage          `json:"usage,omitempty"`      // set for a crawl that states its purpose only
	Raw        json.RawMessage `json:"-"`                    // the body as the server sent it, for a crawl a call returned alone
}

// CrawlList is GET /v1/crawls's answer.
type CrawlList struct {
	Crawls []Crawl         `json:"crawls"` // by id
	Raw    json.RawMessage `json:"-"`      // the body as the server sent it
}

// Freshness is what the recrawl schedule knows of a continuous crawl's
// pages as of At: gauges, recomputed now and then.
type Freshness struct {
	At        time.Time `json:"at"`
	Scheduled int64     `json:"scheduled"`  // pages waiting for a recrawl
	Due       int64     `json:"due"`        // recrawls whose time has come
	Overdue   int64     `json:"overdue"`    // of Due, those more than the crawl's MinS late
	Freshness float64   `json:"freshness"`  // expected share of stored copies that match the live page, 0 to 1
	MeanAgeS  float64   `json:"mean_age_s"` // expected time since the live page differed from the stored copy, averaged, in seconds
}

// Waiting is what a crawl waits for while nothing of it may be fetched.
type Waiting struct {
	ForSeconds float64   `json:"for_s"`
	Until      time.Time `json:"until"`
	Hosts      int       `json:"hosts"`  // hosts with work, all waiting
	Reason     string    `json:"reason"` // why the soonest waits: retry-after, robots-retry-after, backoff, ...
	Why        string    `json:"why"`    // the reason in words
	Text       string    `json:"text"`   // "waiting 59m for 1 host (robots.txt Retry-After)"
}

// Seeds is POST /v1/crawls/{id}/seeds's body.
type Seeds struct {
	Seeds []string `json:"seeds"`
}

// SeedsAdded is POST /v1/crawls/{id}/seeds's answer.
type SeedsAdded struct {
	Added       int             `json:"added"`        // seeds queued: new to the crawl
	AlreadySeen int             `json:"already_seen"` // seeds the crawl had seen (not queued again)
	Raw         json.RawMessage `json:"-"`            // the body as the server sent it
}

// ExclusionEdit is POST /v1/crawls/{id}/exclusions's body.
type ExclusionEdit struct {
	Add    []string `json:"add,omitempty"`
	Remove []string `json:"remove,omitempty"`
}

// Exclusions are a crawl's exclusion patterns.
type Exclusions struct {
	Patterns []string        `json:"patterns"` // empty, never nil, from the server
	Raw      json.RawMessage `json:"-"`        // the body as the server sent it
}
