package simhash

import (
	"encoding/binary"
	"math/bits"
)

// Near-duplicate lookup by bands (the pigeonhole principle): a fingerprint
// is cut into NumBands bands of 16 bits. Two fingerprints within Hamming
// distance MaxNear of each other differ in at most MaxNear bits, so in at
// most MaxNear of the NumBands bands: at least one band is equal. Looking
// a fingerprint up by each of its bands' exact values therefore finds every
// stored fingerprint within MaxNear (and some farther ones, which the
// lookup drops by counting the differing bits). The index is keyed by the
// fingerprints' values, not by host, so that a fleet can shard it by value.

// NumBands is the number of 16-bit bands of a fingerprint.
const NumBands = 4

// MaxNear is the largest Hamming distance a band lookup is certain to
// find: NumBands - 1.
const MaxNear = NumBands - 1

// Band returns band i (0..NumBands-1) of fp: bits 16i to 16i+15.
func Band(fp uint64, i int) uint16 { return uint16(fp >> (16 * i)) }

// BandKey appends the key of fp's band i: the band's number (1 byte), its
// value (2 bytes, big-endian) and fp itself (8 bytes, big-endian), so that
// the fingerprints sharing a band value are contiguous under the 3-byte
// prefix BandKey(nil, fp, i)[:3], and a store can hold the index as keys.
func BandKey(dst []byte, fp uint64, i int) []byte {
	dst = append(dst, byte(i))
	dst = binary.BigEndian.AppendUint16(dst, Band(fp, i))
	return binary.BigEndian.AppendUint64(dst, fp)
}

// BandPrefixLen is the length of the prefix that BandKey's fingerprints
// of one band value share.
const BandPrefixLen = 3

// Index finds stored fingerprints near a given one, in memory. Each
// fingerprint costs NumBands slots plus its value; the store-backed index
// of the node keeps BandKey keys instead. Not safe for concurrent use.
type Index[V any] struct {
	entries []indexEntry[V]
	bands   [NumBands]map[uint16][]int32 // band value → entries holding it
}

type indexEntry[V any] struct {
	fp uint64
	v  V
}

// NewIndex returns an empty index.
func NewIndex[V any]() *Index[V] {
	x := &Index[V]{}
	for i := range x.bands {
		x.bands[i] = make(map[uint16][]int32)
	}
	return x
}

// Len is the number of fingerprints added.
func (x *Index[V]) Len() int { return len(x.entries) }

// Add stores fp with its value. Adding a fingerprint again stores it
// again (each with its own value).
func (x *Index[V]) Add(fp uint64, v V) {
	id := int32(len(x.entries))
	x.entries = append(x.entries, indexEntry[V]{fp, v})
	for i := range NumBands {
		b := Band(fp, i)
		x.bands[i][b] = append(x.bands[i][b], id)
	}
}

// Near calls fn for every stored fingerprint within Hamming distance
// maxDist of fp (0..MaxNear; larger values are cut to MaxNear), each once,
// with its distance, nearest band first, until fn returns false. It
// reports whether fn was called at all.
func (x *Index[V]) Near(fp uint64, maxDist int, fn func(fp uint64, dist int, v V) bool) bool {
	maxDist = min(max(maxDist, 0), MaxNear)
	called := false
	for i := range NumBands {
		for _, id := range x.bands[i][Band(fp, i)] {
			e := x.entries[id]
			d := bits.OnesCount64(e.fp ^ fp)
			if d > maxDist || firstSharedBand(e.fp, fp) != i {
				continue // too far, or met already under an earlier band
			}
			called = true
			if !fn(e.fp, d, e.v) {
				return true
			}
		}
	}
	return called
}

// firstSharedBand is the lowest band a and b have equal, or NumBands.
func firstSharedBand(a, b uint64) int {
	for i := range NumBands {
		if Band(a, i) == Band(b, i) {
			return i
		}
	}
	return NumBands
}
