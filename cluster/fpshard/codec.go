package fpshard

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/trawl-crawler/trawl/internal/store/dedup"
	"github.com/trawl-crawler/trawl/simhash"
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
//	  'N' | min resemblance (2 B, BE, of 65535) |            near lookup
//	        FP (8 B, BE) | title (8 B, BE) | heading (8 B, BE) |
//	        shared title (1 B: 0 or 1) | sketch
//	        (simhash.SketchBytes) | probes (1 B) | each: band
//	        (1 B) | value (2 B, BE)
//	  'e' | SHA-256 (32 B) | uvarint n | dedup.Original     add exact
//	        .Encode() (n B)
//	  'n' | bands (1 B) | FP (8 B, BE) | title (8 B, BE) |  add near
//	        heading (8 B, BE) | sketch (simhash.SketchBytes) |
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
//	  near:  resemblance (2 B, BE, of 65535) | job (uvarint) |
//	         URL (to the end)
//
// bands is a dedup.Bands: the bands of FP whose values are the partition's;
// a lookup's probes are those whose values are the partition's
// (dedup.Probes). Version 1 carried a SimHash distance and weak bits
// instead of a sketch: members of both versions do not mix.
const version = 2

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
	kind   byte
	sum    [sha256.Size]byte
	print  simhash.Print
	bands  dedup.Bands
	probes []dedup.Probe
	minRes float64
	orig   dedup.Original
	url    string
	job    uint32
}

func appendExact(dst []byte, sum [sha256.Size]byte) []byte {
	return append(append(dst, opExact), sum[:]...)
}

func appendNear(dst []byte, p simhash.Print, minRes float64, probes []dedup.Probe) []byte {
	dst = append(dst, opNear)
	dst = binary.BigEndian.AppendUint16(dst, quantize(minRes))
	dst = binary.BigEndian.AppendUint64(dst, p.FP)
	dst = binary.BigEndian.AppendUint64(dst, p.Title)
	dst = binary.BigEndian.AppendUint64(dst, p.Heading)
	shared := byte(0)
	if p.SharedTitle {
		shared = 1
	}
	dst = append(dst, shared)
	dst = p.Sketch.AppendTo(dst)
	probes = probes[:min(len(probes), 255)]
	dst = append(dst, byte(len(probes)))
	for _, pr := range probes {
		dst = append(dst, byte(pr.Band))
		dst = binary.BigEndian.AppendUint16(dst, pr.Value)
	}
	return dst
}

// quantize maps a resemblance (0 to 1) to 0 to 65535.
func quantize(r float64) uint16 { return uint16(math.Round(min(max(r, 0), 1) * 65535)) }

func appendAddExact(dst []byte, sum [sha256.Size]byte, o dedup.Original) []byte {
	dst = append(append(dst, opAddExact), sum[:]...)
	enc := o.Encode()
	dst = binary.AppendUvarint(dst, uint64(len(enc)))
	return append(dst, enc...)
}

func appendAddNear(dst []byte, p simhash.Print, url string, job uint32, bands dedup.Bands) []byte {
	dst = append(dst, opAddNear, byte(bands))
	dst = binary.BigEndian.AppendUint64(dst, p.FP)
	dst = binary.BigEndian.AppendUint64(dst, p.Title)
	dst = binary.BigEndian.AppendUint64(dst, p.Heading)
	dst = p.Sketch.AppendTo(dst)
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
			b := take(2 + 25 + simhash.SketchBytes + 1)
			if b == nil {
				return nil, fmt.Errorf("%w: near lookup cut off", errMalformed)
			}
			o.minRes = float64(binary.BigEndian.Uint16(b)) / 65535
			o.print.FP = binary.BigEndian.Uint64(b[2:])
			o.print.Title = binary.BigEndian.Uint64(b[10:])
			o.print.Heading = binary.BigEndian.Uint64(b[18:])
			if b[26] > 1 {
				return nil, fmt.Errorf("%w: shared title %d", errMalformed, b[26])
			}
			o.print.SharedTitle = b[26] == 1
			o.print.Sketch, _ = simhash.DecodeSketch(b[27:])
			n := int(b[len(b)-1])
			pb := take(3 * n)
			if pb == nil {
				return nil, fmt.Errorf("%w: near lookup's probes cut off", errMalformed)
			}
			for i := range n {
				pr := dedup.Probe{Band: int(pb[3*i]), Value: binary.BigEndian.Uint16(pb[3*i+1:])}
				if pr.Band >= simhash.NumBands {
					return nil, fmt.Errorf("%w: probe of band %d", errMalformed, pr.Band)
				}
				o.probes = append(o.probes, pr)
			}
		case opAddNear:
			b := take(1 + 24 + simhash.SketchBytes)
			if b == nil {
				return nil, fmt.Errorf("%w: near add cut off", errMalformed)
			}
			o.bands = dedup.Bands(b[0])
			o.print.FP = binary.BigEndian.Uint64(b[1:])
			o.print.Title = binary.BigEndian.Uint64(b[9:])
			o.print.Heading = binary.BigEndian.Uint64(b[17:])
			o.print.Sketch, _ = simhash.DecodeSketch(b[25:])
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
	b := binary.BigEndian.AppendUint16(nil, quantize(m.Resemblance))
	b = binary.AppendUvarint(b, uint64(m.Job))
	return append(b, m.URL...)
}

func decodeMatch(b []byte) (dedup.Match, error) {
	if len(b) < 2 {
		return dedup.Match{}, fmt.Errorf("%w: near answer", errMalformed)
	}
	job, n := binary.Uvarint(b[2:])
	if n <= 0 || job > 1<<32-1 {
		return dedup.Match{}, fmt.Errorf("%w: near answer's job", errMalformed)
	}
	r := float64(binary.BigEndian.Uint16(b)) / 65535
	return dedup.Match{Resemblance: r, Job: uint32(job), URL: string(b[2+n:])}, nil
}
