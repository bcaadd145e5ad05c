package fpshard

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/trawl-crawler/trawl/internal/dedup"
)

// Message layout on trawl.fp.<partition>. Part of the fleet's protocol (a
// member asks another, which may run another build):
//
//	request or adds:
//	+---------+-------------------------------------------------------+
//	| version | ops, to the end of the message                        |
//	| 1 B (1) |                                                       |
//	+---------+-------------------------------------------------------+
//	op:
//	  'E' | SHA-256 (32 B)                                  exact lookup
//	  'N' | bands (1 B) | max dist (1 B) | FP (8 B, BE) |   near lookup
//	        weak (8 B, BE)
//	  'e' | SHA-256 (32 B) | uvarint n | dedup.Original     add exact
//	        .Encode() (n B)
//	  'n' | bands (1 B) | FP (8 B, BE) | weak (8 B, BE) |   add near
//	        job (uvarint) | uvarint n | URL (n B)
//
//	reply (to a message holding lookups only; adds are published):
//	+---------+---------+-------------------------------------------+
//	| version | status  | one answer per lookup, in the request's   |
//	| 1 B (1) | 1 B     | order (status ok only)                    |
//	+---------+---------+-------------------------------------------+
//	status: 0 ok; 1 the partition is not served here (moving);
//	        2 the request was malformed
//	answer: 0x00 not seen | 0x01 uvarint n | payload (n B):
//	  exact: dedup.Original.Encode()
//	  near:  distance (1 B) | job (uvarint) | URL (to the end)
//
// bands is a dedup.Bands: the bands of FP whose values are the partition's.
const version = 1

const (
	opExact    = 'E'
	opNear     = 'N'
	opAddExact = 'e'
	opAddNear  = 'n'
)

const (
	statusOK        = 0
	statusNotServed = 1
	statusMalformed = 2
)

var errMalformed = errors.New("fpshard: malformed message")

// op is one decoded operation.
type op struct {
	kind    byte
	sum     [sha256.Size]byte
	print   dedup.Print
	bands   dedup.Bands
	maxDist int
	orig    dedup.Original
	url     string
	job     uint32
}

func appendExact(dst []byte, sum [sha256.Size]byte) []byte {
	return append(append(dst, opExact), sum[:]...)
}

func appendNear(dst []byte, p dedup.Print, maxDist int, bands dedup.Bands) []byte {
	dst = append(dst, opNear, byte(bands), byte(min(max(maxDist, 0), 255)))
	dst = binary.BigEndian.AppendUint64(dst, p.FP)
	return binary.BigEndian.AppendUint64(dst, p.Weak)
}

func appendAddExact(dst []byte, sum [sha256.Size]byte, o dedup.Original) []byte {
	dst = append(append(dst, opAddExact), sum[:]...)
	enc := o.Encode()
	dst = binary.AppendUvarint(dst, uint64(len(enc)))
	return append(dst, enc...)
}

func appendAddNear(dst []byte, p dedup.Print, url string, job uint32, bands dedup.Bands) []byte {
	dst = append(dst, opAddNear, byte(bands))
	dst = binary.BigEndian.AppendUint64(dst, p.FP)
	dst = binary.BigEndian.AppendUint64(dst, p.Weak)
	dst = binary.AppendUvarint(dst, uint64(job))
	dst = binary.AppendUvarint(dst, uint64(len(url)))
	return append(dst, url...)
}

// decodeOps reads a request's operations.
func decodeOps(msg []byte) ([]op, error) {
	if len(msg) == 0 || msg[0] != version {
		return nil, fmt.Errorf("%w: version", errMalformed)
	}
	r := msg[1:]
	var ops []op
	take := func(n int) []byte {
		if n < 0 || n > len(r) {
			r = nil
			return nil
		}
		b := r[:n]
		r = r[n:]
		return b
	}
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(r)
		if n <= 0 {
			return 0, false
		}
		r = r[n:]
		return v, true
	}
	for len(r) > 0 {
		o := op{kind: r[0]}
		r = r[1:]
		switch o.kind {
		case opExact, opAddExact:
			b := take(sha256.Size)
			if b == nil {
				return nil, fmt.Errorf("%w: digest cut off", errMalformed)
			}
			copy(o.sum[:], b)
			if o.kind == opAddExact {
				n, ok := uvarint()
				b := take(int(min(n, uint64(len(r)+1))))
				if !ok || b == nil {
					return nil, fmt.Errorf("%w: original cut off", errMalformed)
				}
				var err error
				if o.orig, err = dedup.DecodeOriginal(b); err != nil {
					return nil, fmt.Errorf("%w: %w", errMalformed, err)
				}
			}
		case opNear:
			b := take(2 + 16)
			if b == nil {
				return nil, fmt.Errorf("%w: near lookup cut off", errMalformed)
			}
			o.bands, o.maxDist = dedup.Bands(b[0]), int(b[1])
			o.print = dedup.Print{FP: binary.BigEndian.Uint64(b[2:]), Weak: binary.BigEndian.Uint64(b[10:])}
		case opAddNear:
			b := take(1 + 16)
			if b == nil {
				return nil, fmt.Errorf("%w: near add cut off", errMalformed)
			}
			o.bands = dedup.Bands(b[0])
			o.print = dedup.Print{FP: binary.BigEndian.Uint64(b[1:]), Weak: binary.BigEndian.Uint64(b[9:])}
			job, ok := uvarint()
			if !ok || job > 1<<32-1 {
				return nil, fmt.Errorf("%w: near add's job", errMalformed)
			}
			o.job = uint32(job)
			n, ok := uvarint()
			u := take(int(min(n, uint64(len(r)+1))))
			if !ok || u == nil {
				return nil, fmt.Errorf("%w: near add's URL cut off", errMalformed)
			}
			o.url = string(u)
		default:
			return nil, fmt.Errorf("%w: op %#x", errMalformed, o.kind)
		}
		if o.bands&^dedup.AllBands != 0 {
			return nil, fmt.Errorf("%w: bands %#x", errMalformed, o.bands)
		}
		ops = append(ops, o)
	}
	return ops, nil
}

// answer is one lookup's outcome in a reply.
type answer struct {
	found   bool
	payload []byte
}

func appendAnswer(dst []byte, a answer) []byte {
	if !a.found {
		return append(dst, 0)
	}
	dst = binary.AppendUvarint(append(dst, 1), uint64(len(a.payload)))
	return append(dst, a.payload...)
}

// decodeReply reads a reply to a request of n lookups.
func decodeReply(msg []byte, n int) (status byte, answers []answer, err error) {
	if len(msg) < 2 || msg[0] != version {
		return 0, nil, fmt.Errorf("%w: reply header", errMalformed)
	}
	if msg[1] != statusOK {
		return msg[1], nil, nil
	}
	r := msg[2:]
	answers = make([]answer, 0, n)
	for range n {
		if len(r) == 0 {
			return 0, nil, fmt.Errorf("%w: %d answers, want %d", errMalformed, len(answers), n)
		}
		found := r[0] == 1
		r = r[1:]
		if !found {
			answers = append(answers, answer{})
			continue
		}
		l, m := binary.Uvarint(r)
		if m <= 0 || l > uint64(len(r)-m) {
			return 0, nil, fmt.Errorf("%w: answer cut off", errMalformed)
		}
		answers = append(answers, answer{found: true, payload: r[m : m+int(l)]})
		r = r[m+int(l):]
	}
	if len(r) != 0 {
		return 0, nil, fmt.Errorf("%w: trailing bytes in a reply", errMalformed)
	}
	return statusOK, answers, nil
}

func encodeMatch(m dedup.Match) []byte {
	b := binary.AppendUvarint([]byte{byte(m.Dist)}, uint64(m.Job))
	return append(b, m.URL...)
}

func decodeMatch(b []byte) (dedup.Match, error) {
	if len(b) < 1 {
		return dedup.Match{}, fmt.Errorf("%w: near answer", errMalformed)
	}
	job, n := binary.Uvarint(b[1:])
	if n <= 0 || job > 1<<32-1 {
		return dedup.Match{}, fmt.Errorf("%w: near answer's job", errMalformed)
	}
	return dedup.Match{Dist: int(b[0]), Job: uint32(job), URL: string(b[1+n:])}, nil
}
