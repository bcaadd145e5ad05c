package robotscache

import (
	"fmt"
	"time"

	"github.com/trawl-crawler/trawl/internal/store"
)

// OriginStatus is what the store says of one origin's robots.txt, for
// operators (the API's host status).
type OriginStatus struct {
	Origin string
	// Pending: a request went out and its answer is not settled (in
	// flight, or lost by a crash).
	Pending bool
	// Attempts counts unavailable answers in a row (429, 5xx, network
	// errors), since OutageSince.
	Attempts    int
	OutageSince time.Time
	// LastAnswer is when the last answer settled, good or unavailable.
	LastAnswer time.Time
	// HasCopy: a good answer is kept; Status is its HTTP status (2xx:
	// parsed rules; 4xx: no restrictions) and Fetched when it came.
	HasCopy bool
	Status  int
	Fetched time.Time
	// Err names a record that could not be read (it is fetched again).
	Err string
}

// Status returns the stored robots.txt state of every origin of host (a
// politeness key), read from the store: what a restart would find.
func (k *Keeper) Status(host string) ([]OriginStatus, error) {
	prefix := store.RobotsKey(host, "")
	it, err := k.opts.DB.NewIter(prefix)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []OriginStatus
	for it.First(); it.Valid(); it.Next() {
		s := OriginStatus{Origin: string(it.Key()[len(prefix):])}
		r, err := decodeRecord(it.Value())
		if err != nil {
			s.Err = err.Error()
			out = append(out, s)
			continue
		}
		s.Pending, s.Attempts, s.OutageSince, s.LastAnswer = r.pending, r.attempts, r.outageSince, r.at
		if r.copy != nil {
			s.HasCopy, s.Status, s.Fetched = true, r.copy.status, r.copy.fetched
		}
		out = append(out, s)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("robots: status of %s: %w", host, err)
	}
	return out, nil
}
