package job

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Tally is what a job has done, as counts that add up across the node's
// runs: the node stores the running total with every completion of the
// job's URLs (in the completion's batch), so that a restart, even after
// a crash, carries on counting from what was durable. Requests sent but
// not yet completed when a run stops are counted by the next completion
// of the job that commits, or lost with a crash: the stored tally may
// trail what servers saw by at most the fetches in flight.
type Tally struct {
	Pages            int64            `json:"pages"`
	Shared           int64            `json:"shared"`
	Requests         int64            `json:"requests"`
	RobotsFetches    int64            `json:"robots_fetches"`
	RobotsDisallowed int64            `json:"robots_disallowed"`
	RobotsGaveUp     int64            `json:"robots_gave_up"`
	Bytes            int64            `json:"bytes"`
	Discovered       int64            `json:"discovered"`
	OutOfScope       int64            `json:"out_of_scope"`
	Excluded         int64            `json:"excluded"`
	BadLinks         int64            `json:"bad_links"`
	Duplicates       int64            `json:"duplicates"`
	Revisits         int64            `json:"revisits"`        // exact content duplicates, archived as revisit records
	NearDuplicates   int64            `json:"near_duplicates"` // pages whose main text resembles an archived one's
	Recrawls         int64            `json:"recrawls"`        // fetches of pages fetched before
	NotModified      int64            `json:"not_modified"`    // of recrawls, 304 answers: no body
	Changed          int64            `json:"changed"`         // of recrawls, content differed from the stored copy
	Sitemaps         int64            `json:"sitemaps"`        // sitemap files fetched
	SitemapURLs      int64            `json:"sitemap_urls"`    // URLs queued from sitemaps (new to the job)
	SitemapKnown     int64            `json:"sitemap_known"`   // URLs sitemaps listed that the job had seen already
	Routed           int64            `json:"routed"`          // URLs found for partitions another node serves, sent to it (fleet)
	WaitGaveUp       int64            `json:"wait_gave_up"`    // URLs given up: their host asked to wait past the job's MaxWait
	Requisites       int64            `json:"requisites"`      // resources pages embed, queued (new to the job; Spec.Requisites)
	Status           map[string]int64 `json:"status"`          // responses by status class
	Errors           map[string]int64 `json:"errors"`          // failures by class
}

// fields lists the fixed counters in their stored order. New counters go
// at the end: an older decoder skips them.
func (t *Tally) fields() []*int64 {
	return []*int64{&t.Pages, &t.Shared, &t.Requests, &t.RobotsFetches, &t.RobotsDisallowed, &t.RobotsGaveUp,
		&t.Bytes, &t.Discovered, &t.OutOfScope, &t.Excluded, &t.BadLinks, &t.Duplicates, &t.Revisits, &t.NearDuplicates,
		&t.Recrawls, &t.NotModified, &t.Changed,
		&t.Sitemaps, &t.SitemapURLs, &t.SitemapKnown, &t.Routed, &t.WaitGaveUp, &t.Requisites}
}

// Add returns t + u.
func (t Tally) Add(u Tally) Tally {
	out := t
	of, uf := out.fields(), u.fields()
	for i := range of {
		*of[i] += *uf[i]
	}
	out.Status, out.Errors = addMaps(t.Status, u.Status), addMaps(t.Errors, u.Errors)
	return out
}

func addMaps(a, b map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(a)+len(b))
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}

// tallyVersion is the first byte of a stored Tally.
const tallyVersion = 1

// Encode returns t's stored form: version; the number of fixed counters,
// then each (uvarint); then the status and error maps, each as a count
// and (key length, key, value) triples in key order (uvarints).
func (t Tally) Encode() []byte {
	b := t.appendCounters(make([]byte, 0, 64))
	b = appendSum(b, t.Status, nil)
	return appendSum(b, t.Errors, nil)
}

// appendCounters appends the version and the fixed counters of t's stored
// form to b.
func (t *Tally) appendCounters(b []byte) []byte {
	f := t.fields()
	b = binary.AppendUvarint(append(b, tallyVersion), uint64(len(f)))
	for _, p := range f {
		b = binary.AppendUvarint(b, uint64(max(*p, 0)))
	}
	return b
}

// appendSum appends the stored form of the map a + b (a key of either,
// its values added: Add's addMaps) to dst, without building that map: the
// number of keys, then (key length, key, value) in key order.
func appendSum(dst []byte, a, b map[string]int64) []byte {
	var buf [16]string
	keys := buf[:0]
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	dst = binary.AppendUvarint(dst, uint64(len(keys)))
	for _, k := range keys {
		dst = binary.AppendUvarint(dst, uint64(len(k)))
		dst = append(dst, k...)
		dst = binary.AppendUvarint(dst, uint64(max(a[k]+b[k], 0)))
	}
	return dst
}

// ErrBadTally wraps every DecodeTally error.
var ErrBadTally = errors.New("job: malformed stored tally")

// maxTallyKeys bounds a stored map (status and error classes are few).
const maxTallyKeys = 1024

// DecodeTally reads a stored Tally. Counters past the ones it knows are
// skipped (a newer trawl wrote them).
func DecodeTally(b []byte) (Tally, error) {
	if len(b) == 0 || b[0] != tallyVersion {
		return Tally{}, fmt.Errorf("%w: version", ErrBadTally)
	}
	rest := b[1:]
	next := func() (uint64, error) {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			return 0, fmt.Errorf("%w: cut off", ErrBadTally)
		}
		rest = rest[n:]
		return v, nil
	}
	var t Tally
	n, err := next()
	if err != nil {
		return Tally{}, err
	}
	f := t.fields()
	for i := range n {
		v, err := next()
		if err != nil {
			return Tally{}, err
		}
		if v > 1<<62 {
			return Tally{}, fmt.Errorf("%w: counter %d out of range", ErrBadTally, i)
		}
		if int(i) < len(f) {
			*f[i] = int64(v)
		}
	}
	for _, m := range []*map[string]int64{&t.Status, &t.Errors} {
		count, err := next()
		if err != nil {
			return Tally{}, err
		}
		if count > maxTallyKeys {
			return Tally{}, fmt.Errorf("%w: %d map keys", ErrBadTally, count)
		}
		*m = make(map[string]int64, count)
		for range count {
			kl, err := next()
			if err != nil {
				return Tally{}, err
			}
			if kl > uint64(len(rest)) {
				return Tally{}, fmt.Errorf("%w: key cut off", ErrBadTally)
			}
			k := string(rest[:kl])
			rest = rest[kl:]
			v, err := next()
			if err != nil {
				return Tally{}, err
			}
			if v > 1<<62 {
				return Tally{}, fmt.Errorf("%w: map value out of range", ErrBadTally)
			}
			(*m)[k] = int64(v)
		}
	}
	if len(rest) != 0 {
		return Tally{}, fmt.Errorf("%w: %d trailing bytes", ErrBadTally, len(rest))
	}
	return t, nil
}
