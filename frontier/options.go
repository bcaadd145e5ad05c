package frontier

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Options: the frontier's settings, the default each zero field takes
// (withDefaults) and the ranges they must lie in (Validate).

// The defaults of the gap options, shared by the node and the command
// line so that each is written once.
const (
	DefaultMinDelay         = time.Second
	DefaultMaxDelay         = 10 * time.Minute
	DefaultMaxAdaptiveDelay = 30 * time.Second
)

// ValidMaxDelay reports whether maxDelay may cap the gap of hosts whose
// least gap is minDelay: it is not negative, and it is 0 (the default) or
// at least minDelay. Options.Validate and the node's check this rule.
func ValidMaxDelay(minDelay, maxDelay time.Duration) bool {
	return maxDelay >= 0 && (maxDelay == 0 || maxDelay >= minDelay)
}

// Options configures a Frontier. A zero field takes the default named.
type Options struct {
	// Levels is the number of priority levels. Default 3.
	Levels int
	// MinDelay is the least gap between two fetches to one host. Default
	// 1s; negative means no minimum (the other rules still apply).
	MinDelay time.Duration
	// MaxDelay caps a host's delay as backoff grows it. Default 10m.
	MaxDelay time.Duration
	// MaxAdaptiveDelay caps the adaptive term of the gap, ten times the
	// last response time, so that one slow response cannot park a host for
	// long (Heritrix caps its own the same way). It does not cap MinDelay,
	// Crawl-delay or the backoff of 429, 503 and time-outs (MaxDelay does).
	// Default 30s; negative means no cap.
	MaxAdaptiveDelay time.Duration
	// MaxRetryAfter caps how long a Retry-After header can park a host.
	// Default 1h.
	MaxRetryAfter time.Duration
	// MaxParallel is the number of fetches a host may have in flight.
	// Default 1.
	MaxParallel int
	// IPMaxParallel is the number of fetches all hosts on one IP address
	// may have in flight together. Default 2.
	IPMaxParallel int
	// HostBudget is the number of URLs leased per host in this crawl;
	// what is queued past it is dropped. 0 means no budget.
	HostBudget int
	// DuplicateAllowance cuts the budget of a host whose pages are mostly
	// duplicates: once its completions that were duplicates (Outcome.
	// Duplicate) outnumber the others by more than this, the host has
	// spent its budget and what is queued for it is dropped. A host may
	// thus go on while at least half of what it serves is new content,
	// plus this slack. 0 means no cut.
	DuplicateAllowance int
	// OnDrop, if set, is told of every queued or added item the frontier
	// discards, and why (the crawl log's dropped lines); items of
	// cancelled jobs held aside are not reported one by one. It is called
	// with the frontier's lock held: it must be quick and must not call
	// the Frontier.
	OnDrop func(it Item, why DropReason)
	// MaxHeadStart bounds the head start a due host gets over other due
	// hosts for the work its queue holds (pending items times its gap):
	// when there are more hosts due than fetch slots, a host with a long
	// queue goes before hosts that became due up to this much earlier,
	// so that it keeps its polite rate (see Frontier.run). It is also
	// the most any host can be passed over that way. Default 1m;
	// negative means none (due hosts in the order they became due).
	MaxHeadStart time.Duration
	// FailLimit is how many fetches in a row may end without a response,
	// in the same way (all time-outs, or all network failures: Outcome.
	// Timeout, Outcome.Failed without a Status), before the host is given
	// up: by then backoff has slowed it to MaxDelay, and the host is
	// marked dead (DropFailing, its reason in HostInfo.DeadReason) and its
	// queue dropped. Any response, or a failure of the other way, starts
	// the count again, so a host that recovers is not punished; the count
	// is not stored, so a restart starts it again too. Default 20;
	// negative means never.
	FailLimit int
	// LeaseTimeout is how long a worker holds a lease before it is
	// re-offered. Default 5m.
	LeaseTimeout time.Duration
	// Window is how many queued items per host and level are read into
	// memory at a time. Default 16.
	Window int
	// WindowBudget bounds the items held in all hosts' windows together,
	// so that memory grows neither with the queue nor with the number of
	// hosts. A host reads a whole window while it fits in the budget; past
	// it, one item, while fewer than WindowBudget/16 (at least 1) such
	// spare items are held; otherwise it waits, out of the ready heap,
	// until a lease makes room. Spare items belong to hosts due now, which
	// the next leases take, so a budget held by hosts that are not due (or
	// that wait for another level's read) does not stall the others. Items
	// put back at the head of a queue (requeued, expired leases) come on
	// top. Default 262144.
	WindowBudget int
	// Refillers bounds the goroutines that read windows from the Store,
	// without the frontier's lock. Default 2.
	Refillers int
	// Store holds the queues and host states; New restores the frontier
	// from it. Default: a new MemStore.
	Store Store
	// Partitioned makes the frontier serve a set of partitions
	// (partition.Of of each host) that changes at run time: New restores
	// the job counters only, and no host; ServePartition loads one
	// partition's hosts from the Store and ReleasePartition drops them.
	// Items of a host whose partition is not served are refused
	// (NotServedError), and Stats counts the served partitions only.
	// False: every host is restored by New and every item accepted.
	Partitioned bool
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Levels == 0 {
		o.Levels = 3
	}
	switch {
	case o.MinDelay == 0:
		o.MinDelay = DefaultMinDelay
	case o.MinDelay < 0:
		o.MinDelay = 0
	}
	if o.MaxDelay == 0 {
		o.MaxDelay = DefaultMaxDelay
	}
	if o.MaxRetryAfter == 0 {
		o.MaxRetryAfter = time.Hour
	}
	switch {
	case o.MaxAdaptiveDelay == 0:
		o.MaxAdaptiveDelay = DefaultMaxAdaptiveDelay
	case o.MaxAdaptiveDelay < 0:
		o.MaxAdaptiveDelay = math.MaxInt64
	}
	if o.MaxParallel == 0 {
		o.MaxParallel = 1
	}
	if o.IPMaxParallel == 0 {
		o.IPMaxParallel = 2
	}
	if o.LeaseTimeout == 0 {
		o.LeaseTimeout = 5 * time.Minute
	}
	switch {
	case o.FailLimit == 0:
		o.FailLimit = 20
	case o.FailLimit < 0:
		o.FailLimit = math.MaxInt32
	}
	switch {
	case o.MaxHeadStart == 0:
		o.MaxHeadStart = time.Minute
	case o.MaxHeadStart < 0:
		o.MaxHeadStart = 0
	}
	if o.Window == 0 {
		o.Window = 16
	}
	if o.WindowBudget == 0 {
		o.WindowBudget = 1 << 18
	}
	if o.Refillers == 0 {
		o.Refillers = 2
	}
	if o.Store == nil {
		o.Store = &MemStore{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Validate reports every field that is out of range.
func (o Options) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("frontier: option %s = %v: %s", field, v, why))
	}
	if o.Levels < 0 || o.Levels > maxLevels {
		bad("Levels", o.Levels, fmt.Sprintf("want 1..%d", maxLevels))
	}
	if !ValidMaxDelay(o.MinDelay, o.MaxDelay) {
		bad("MaxDelay", o.MaxDelay, "negative or below MinDelay")
	}
	if o.MaxRetryAfter < 0 {
		bad("MaxRetryAfter", o.MaxRetryAfter, "negative")
	}
	if o.MaxParallel < 0 {
		bad("MaxParallel", o.MaxParallel, "negative")
	}
	if o.IPMaxParallel < 0 {
		bad("IPMaxParallel", o.IPMaxParallel, "negative")
	}
	if o.HostBudget < 0 {
		bad("HostBudget", o.HostBudget, "negative")
	}
	if o.DuplicateAllowance < 0 {
		bad("DuplicateAllowance", o.DuplicateAllowance, "negative")
	}
	if o.LeaseTimeout < 0 {
		bad("LeaseTimeout", o.LeaseTimeout, "negative")
	}
	if o.Window < 0 {
		bad("Window", o.Window, "negative")
	}
	if o.WindowBudget < 0 {
		bad("WindowBudget", o.WindowBudget, "negative")
	}
	if o.Refillers < 0 {
		bad("Refillers", o.Refillers, "negative")
	}
	return errors.Join(errs...)
}
