// Package partition maps a host to the partition that owns all of its state.
//
// The mapping is a stable hash of the host's politeness key over a fixed
// partition count. It never changes for a given host and count, so state
// keyed by partition can be snapshotted and moved as a unit. Safe for
// concurrent use; it holds no state.
package partition

import "hash/fnv"

// Count is the number of partitions a crawl's state is divided into. It is
// part of the on-disk format: changing it re-homes every host.
const Count = 256

// ID identifies one partition, in [0, Count).
type ID uint16

// Of returns the partition that owns host. host must already be the
// politeness key (lower-case host name, no scheme, no port).
func Of(host string) ID {
	h := fnv.New32a()
	h.Write([]byte(host))
	return ID(h.Sum32() % Count)
}

// Content fingerprints (a payload's SHA-256, a SimHash band's value) belong
// to partitions too, by value rather than by host, so that a fleet shards
// its content-seen gate the way it shards its hosts: a fingerprint's first
// 16 bits v (the digest's first two bytes, big-endian, or the band value)
// fall in partition floor(v * Count / 65536). The ranges are contiguous and
// ordered, so one partition's fingerprint keys are a few key ranges (one
// per key kind and band: store.FingerprintRanges). Part of the on-disk
// format and of the fleet's protocol, like Of.

// OfFingerprint returns the partition of a fingerprint whose first 16 bits
// are v.
func OfFingerprint(v uint16) ID { return ofFingerprint(v, Count) }

// FingerprintRange returns the first 16-bit values lo..hi (inclusive) whose
// fingerprints are partition p's; p must be below Count.
func FingerprintRange(p ID) (lo, hi uint16) { return fingerprintRange(p, Count) }

func ofFingerprint(v uint16, count int) ID {
	return ID(uint32(v) * uint32(count) >> 16)
}

// fingerprintRange inverts ofFingerprint: v is p's iff
// p*65536 <= v*count < (p+1)*65536, that is v from ceil(p*65536/count) to
// ceil((p+1)*65536/count)-1; never empty while count <= 65536.
func fingerprintRange(p ID, count int) (lo, hi uint16) {
	ceil := func(x uint32) uint32 { return (x<<16 + uint32(count) - 1) / uint32(count) }
	return uint16(ceil(uint32(p))), uint16(ceil(uint32(p)+1) - 1)
}
