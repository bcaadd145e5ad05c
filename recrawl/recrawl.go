// Package recrawl decides when to fetch a known URL again: it estimates
// each page's change rate from its visits (History, a fixed-size summary)
// and spreads a fetch budget over pages to maximise average freshness
// (Policy). It also holds the baselines the freshness benchmark compares
// against (Uniform, Nutch). The package is pure: it does no I/O and reads
// no clock (every time comes in with a Visit or as an argument), and a
// Policy is immutable after New, so it is safe for concurrent use.
package recrawl

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Rate is a number of events (changes of a page, or fetches) per hour.
type Rate float64

// Interval is the mean time between events at rate r; 0 for a rate that is
// not positive (never).
func (r Rate) Interval() time.Duration {
	if r <= 0 || math.IsNaN(float64(r)) {
		return 0
	}
	return hoursToDuration(1 / float64(r))
}

// Defaults for Options' zero fields.
const (
	DefaultMinInterval     = time.Hour
	DefaultMaxInterval     = 30 * 24 * time.Hour
	DefaultInitialInterval = 24 * time.Hour // Nutch's; trawl's Policy takes the geometric mean of its bounds
	DefaultMemory          = 64
	DefaultPrior           = 0.25
)

// Options configure a Policy. The zero Options is valid: every zero field
// takes its default.
type Options struct {
	// MinInterval is the shortest interval between two visits of a page,
	// however fast it changes. If zero, DefaultMinInterval (1h) is used.
	MinInterval time.Duration
	// MaxInterval is the longest: a page that never changes, or changes
	// too fast to be worth chasing, is still visited this often, so that
	// its estimate can notice a new behaviour. If zero,
	// DefaultMaxInterval (30 days) is used.
	MaxInterval time.Duration
	// InitialInterval is the interval after a page's first visit, when
	// nothing is known of its rate (no group prior, no Last-Modified). If
	// zero, the geometric mean of MinInterval and MaxInterval is used
	// (about 27h with their defaults; 1 min for 20s and 3m): halfway, on
	// the log scale the rates of a web spread over, between the fastest
	// page worth following and the slowest. It is clamped to
	// [MinInterval, MaxInterval].
	InitialInterval time.Duration
	// Memory is how many intervals the estimator remembers: each older
	// interval weighs e^(-1/Memory) of the one after it, so the estimate
	// follows a page whose rate changes. If zero, DefaultMemory (64) is
	// used; +Inf never forgets.
	Memory float64
	// Prior is the number of pseudo-changes, over one mean interval, added
	// to every history so that a page never seen to change gets a small
	// positive rate (about Prior / time observed) instead of 0. If zero,
	// DefaultPrior (0.25) is used; a negative value adds none, which makes
	// the estimate for regular intervals exactly Cho and Garcia-Molina's.
	Prior float64
}

func (o Options) withDefaults() Options {
	if o.MinInterval == 0 {
		o.MinInterval = DefaultMinInterval
	}
	if o.MaxInterval == 0 {
		o.MaxInterval = DefaultMaxInterval
	}
	if o.InitialInterval == 0 {
		o.InitialInterval = hoursToDuration(math.Sqrt(o.MinInterval.Hours() * o.MaxInterval.Hours()))
	}
	o.InitialInterval = min(max(o.InitialInterval, o.MinInterval), o.MaxInterval)
	if o.Memory == 0 {
		o.Memory = DefaultMemory
	}
	if o.Prior == 0 {
		o.Prior = DefaultPrior
	} else if o.Prior < 0 {
		o.Prior = 0
	}
	return o
}

// Validate reports every bad field by name.
func (o Options) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("recrawl: option %s = %v: %s", field, v, why))
	}
	if o.MinInterval < 0 {
		bad("MinInterval", o.MinInterval, "negative")
	}
	if o.MaxInterval < 0 {
		bad("MaxInterval", o.MaxInterval, "negative")
	}
	d := o.withDefaults()
	if o.MinInterval >= 0 && o.MaxInterval >= 0 && d.MaxInterval < d.MinInterval {
		bad("MaxInterval", d.MaxInterval, fmt.Sprintf("below MinInterval (%v)", d.MinInterval))
	}
	if o.InitialInterval < 0 {
		bad("InitialInterval", o.InitialInterval, "negative")
	}
	if o.Memory < 1 && o.Memory != 0 || math.IsNaN(o.Memory) {
		bad("Memory", o.Memory, "want >= 1 interval (or 0 for the default)")
	}
	if math.IsNaN(o.Prior) || math.IsInf(o.Prior, 1) {
		bad("Prior", o.Prior, "not a number")
	}
	return errors.Join(errs...)
}

// Policy estimates change rates and turns them into revisit intervals. It
// is immutable and safe for concurrent use.
type Policy struct {
	o     Options // with defaults
	decay float64 // e^(-1/Memory)
}

// New returns a Policy for o, or o's Validate error.
func New(o Options) (*Policy, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	return &Policy{o: o, decay: math.Exp(-1 / o.Memory)}, nil
}

// Histories is the policy a crawl folds every page's visits with
// (Observe), whatever the bounds of the job that schedules the page: the
// defaults. A page's history outlives any one job's schedule, so what it
// keeps (a first visit's Last-Modified age counts up to 30 days) does not
// depend on a job's RecrawlMax.
var Histories = func() *Policy {
	p, err := New(Options{})
	if err != nil {
		panic(err) // the zero Options are valid
	}
	return p
}()

// Options returns p's options with every default filled in.
func (p *Policy) Options() Options { return p.o }

func hours(d time.Duration) float64 { return d.Hours() }

func hoursToDuration(h float64) time.Duration {
	if h >= float64(math.MaxInt64)/float64(time.Hour) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(h * float64(time.Hour))
}
