// Package urlseen is the URL-seen gate: it answers whether a canonical URL
// has been queued before in this crawl, and records it if not.
//
// Durable is the gate a node uses: a Bloom filter in memory in front of
// the exact set of seen keys in the store, with a small cache of the keys
// a store read found. Mem is an exact in-memory set of 128-bit URL
// fingerprints (16 bytes a URL), for tests and small tools. KeyFilter is
// the same kind of filter over another kind of key, so that a caller can
// skip reading a key the store cannot hold (the node's per-URL records).
// All are safe for concurrent use.
package urlseen

import (
	"crypto/sha256"
	"sync"
)

// Set is a URL-seen gate.
type Set interface {
	// Add records url and reports whether it was new. A URL reported new
	// once is never reported new again in the same crawl.
	Add(url string) (isNew bool, err error)
	// Len is the number of distinct URLs recorded.
	Len() int
}

// fingerprint is the first 128 bits of SHA-256: collisions are negligible
// (birthday bound ~2^64 URLs), and it is cheap next to a fetch.
type fingerprint [16]byte

func fingerprintOf(url string) fingerprint {
	sum := sha256.Sum256([]byte(url))
	var fp fingerprint
	copy(fp[:], sum[:16])
	return fp
}

// Mem is an in-memory Set. Its zero value is ready to use.
type Mem struct {
	mu  sync.Mutex
	set map[fingerprint]struct{}
}

// Add implements Set.
func (m *Mem) Add(url string) (bool, error) {
	fp := fingerprintOf(url)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.set == nil {
		m.set = make(map[fingerprint]struct{})
	}
	if _, ok := m.set[fp]; ok {
		return false, nil
	}
	m.set[fp] = struct{}{}
	return true, nil
}

// Len implements Set.
func (m *Mem) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.set)
}
