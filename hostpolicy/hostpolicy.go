// Package hostpolicy is an operator's standing order for one host: a gap
// of its own between fetches, a cap on parallel fetches, or a pause. The
// node stores one per host (store.PolicyKey) and the frontier applies it
// on the host's next lease; a restart restores it.
//
// A Policy overrides the node's defaults only in the fields it sets:
// MinDelay replaces the node's least gap for the host (robots.txt
// Crawl-delay, the adaptive term and backoff still apply on top of it),
// MaxParallel replaces the node's per-host cap (the per-IP cap still
// applies), and Paused keeps the host's URLs queued and unleased. The
// zero Policy is the node's defaults.
//
// The stored form is versioned: a version byte, a flags byte, then the
// set fields as unsigned varints (MinDelay in milliseconds). Decode
// refuses a version it does not know and trailing bytes.
package hostpolicy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Bounds of a Policy's fields.
const (
	// MaxMinDelay is the longest gap a policy may ask for: a host is
	// paused for anything longer.
	MaxMinDelay = time.Hour
	// MaxParallelCap is the most fetches a policy may allow a host in
	// flight together.
	MaxParallelCap = 64
)

// Policy is what an operator asked of one host. A field left unset keeps
// the node's default.
type Policy struct {
	// MinDelay, if HasMinDelay, is the host's least gap between fetches,
	// 0..MaxMinDelay, in whole milliseconds.
	MinDelay    time.Duration
	HasMinDelay bool
	// MaxParallel, if not 0, is the host's cap on fetches in flight,
	// 1..MaxParallelCap.
	MaxParallel int
	// Paused keeps the host's URLs from being leased.
	Paused bool
}

// IsZero reports that p leaves every default as it is.
func (p Policy) IsZero() bool { return p == Policy{} }

// FieldError is one field Validate rejects; Field is its name in Policy.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Validate reports every field out of range, each a *FieldError.
func (p Policy) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, &FieldError{field, fmt.Errorf("hostpolicy: %s = %v: %s", field, v, why)})
	}
	if p.HasMinDelay {
		switch {
		case p.MinDelay < 0 || p.MinDelay > MaxMinDelay:
			bad("MinDelay", p.MinDelay, fmt.Sprintf("want 0..%v (pause the host for longer)", MaxMinDelay))
		case p.MinDelay%time.Millisecond != 0:
			bad("MinDelay", p.MinDelay, "not whole milliseconds")
		}
	} else if p.MinDelay != 0 {
		bad("MinDelay", p.MinDelay, "set without HasMinDelay")
	}
	if p.MaxParallel < 0 || p.MaxParallel > MaxParallelCap {
		bad("MaxParallel", p.MaxParallel, fmt.Sprintf("want 1..%d, or 0 for the node's default", MaxParallelCap))
	}
	return errors.Join(errs...)
}

// The stored form.
const (
	version = 1

	flagMinDelay    = 1 << 0
	flagMaxParallel = 1 << 1
	flagPaused      = 1 << 2
	flagsKnown      = flagMinDelay | flagMaxParallel | flagPaused
)

// ErrMalformed wraps every Decode error.
var ErrMalformed = errors.New("hostpolicy: malformed stored policy")

// Encode returns p's stored form. p must be valid.
func (p Policy) Encode() []byte {
	b := []byte{version, 0}
	if p.HasMinDelay {
		b[1] |= flagMinDelay
		b = binary.AppendUvarint(b, uint64(p.MinDelay/time.Millisecond))
	}
	if p.MaxParallel != 0 {
		b[1] |= flagMaxParallel
		b = binary.AppendUvarint(b, uint64(p.MaxParallel))
	}
	if p.Paused {
		b[1] |= flagPaused
	}
	return b
}

// Decode reads a stored policy and validates it.
func Decode(b []byte) (Policy, error) {
	if len(b) < 2 {
		return Policy{}, fmt.Errorf("%w: %d bytes", ErrMalformed, len(b))
	}
	if b[0] != version {
		return Policy{}, fmt.Errorf("%w: version %d, want %d", ErrMalformed, b[0], version)
	}
	flags := b[1]
	if flags&^flagsKnown != 0 {
		return Policy{}, fmt.Errorf("%w: unknown flags %#x", ErrMalformed, flags&^flagsKnown)
	}
	rest := b[2:]
	next := func(what string) (uint64, error) {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			return 0, fmt.Errorf("%w: %s cut off", ErrMalformed, what)
		}
		if n != len(binary.AppendUvarint(nil, v)) {
			// One policy, one stored form: a padded varint is not ours.
			return 0, fmt.Errorf("%w: %s not minimally encoded", ErrMalformed, what)
		}
		rest = rest[n:]
		return v, nil
	}
	var p Policy
	if flags&flagMinDelay != 0 {
		ms, err := next("MinDelay")
		if err != nil {
			return Policy{}, err
		}
		if ms > uint64(MaxMinDelay/time.Millisecond) {
			return Policy{}, fmt.Errorf("%w: MinDelay %d ms", ErrMalformed, ms)
		}
		p.MinDelay, p.HasMinDelay = time.Duration(ms)*time.Millisecond, true
	}
	if flags&flagMaxParallel != 0 {
		v, err := next("MaxParallel")
		if err != nil {
			return Policy{}, err
		}
		if v == 0 || v > MaxParallelCap {
			return Policy{}, fmt.Errorf("%w: MaxParallel %d", ErrMalformed, v)
		}
		p.MaxParallel = int(v)
	}
	p.Paused = flags&flagPaused != 0
	if len(rest) != 0 {
		return Policy{}, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(rest))
	}
	return p, nil
}
