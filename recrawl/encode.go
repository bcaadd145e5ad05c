package recrawl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Encoding of a History, for the per-URL record that keeps it (package
// urlstate). Part of the on-disk format once stored:
//
//	+---------+-----------------------------------------------------+
//	| 0x01    | version                                             |
//	| last    | varint, Unix ns of History.Last (0: never visited)  |
//	| mod     | varint, Unix seconds of History.Modified (0: none)  |
//	| visits  | uvarint                                             |
//	| 22 x float32, little-endian: changed[8], changedHours[8],      |
//	|   unchangedHours, intervals, lmChanges, lmExposure, lmGood,    |
//	|   lmBad                                                        |
//	+---------------------------------------------------------------+
//
// At most 1+10+10+5+88 = 114 bytes.
const historyVersion = 0x01

// historyFloats is the number of float32 counts a History holds.
const historyFloats = 2*bins + 6

// ErrBadHistory wraps every DecodeHistory error.
var ErrBadHistory = errors.New("recrawl: malformed history")

// AppendBinary appends h's encoding to dst.
func (h History) AppendBinary(dst []byte) []byte {
	dst = append(dst, historyVersion)
	var last, mod int64
	if !h.Last.IsZero() {
		last = h.Last.UnixNano()
	}
	if !h.Modified.IsZero() {
		mod = h.Modified.Unix()
	}
	dst = binary.AppendVarint(dst, last)
	dst = binary.AppendVarint(dst, mod)
	dst = binary.AppendUvarint(dst, uint64(h.Visits))
	for _, p := range h.floats() {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(*p))
	}
	return dst
}

// floats lists h's counts in their encoded order.
func (h *History) floats() [historyFloats]*float32 {
	var out [historyFloats]*float32
	for i := range bins {
		out[i], out[bins+i] = &h.changed[i], &h.changedHours[i]
	}
	copy(out[2*bins:], []*float32{&h.unchangedHours, &h.intervals, &h.lmChanges, &h.lmExposure, &h.lmGood, &h.lmBad})
	return out
}

// DecodeHistory reads a History that AppendBinary wrote at the start of b
// and returns it with the bytes after it. A count that is negative, not
// finite or absurdly large is refused: a corrupt store must not steer the
// schedule.
func DecodeHistory(b []byte) (History, []byte, error) {
	var h History
	if len(b) == 0 || b[0] != historyVersion {
		return h, b, fmt.Errorf("%w: version", ErrBadHistory)
	}
	b = b[1:]
	last, n := binary.Varint(b)
	if n <= 0 {
		return h, b, fmt.Errorf("%w: last visit", ErrBadHistory)
	}
	b = b[n:]
	mod, n := binary.Varint(b)
	if n <= 0 {
		return h, b, fmt.Errorf("%w: last modified", ErrBadHistory)
	}
	b = b[n:]
	visits, n := binary.Uvarint(b)
	if n <= 0 || visits > math.MaxUint32 {
		return h, b, fmt.Errorf("%w: visits", ErrBadHistory)
	}
	b = b[n:]
	if len(b) < 4*historyFloats {
		return h, b, fmt.Errorf("%w: %d bytes of counts, want %d", ErrBadHistory, len(b), 4*historyFloats)
	}
	for i, p := range h.floats() {
		v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if !(v >= 0 && v < 1e30) { // also refuses NaN
			return History{}, b, fmt.Errorf("%w: count %d is %v", ErrBadHistory, i, v)
		}
		*p = v
	}
	b = b[4*historyFloats:]
	if last != 0 {
		h.Last = time.Unix(0, last).UTC()
	}
	if mod != 0 {
		h.Modified = time.Unix(mod, 0).UTC()
	}
	h.Visits = uint32(visits)
	return h, b, nil
}
