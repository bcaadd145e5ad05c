package outbox

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/trawl-crawler/trawl/frontier"
)

// Item layout: an entry's value, and each item of a routed message
// (cluster/route), which is part of the fleet's protocol. Every integer is
// a uvarint, every string a uvarint length and its bytes:
//
//	URL, Host, Depth, Level, Redirects, Attempts, ShapeRun, Via, Job, Requisite
//
// Seq is not carried: the owner's queue gives it. Requisite came later:
// an outbox entry written before it ends at Job (DecodeItem reads it as
// a page), and a routed message of version 1 has none (cluster/route).

// MaxString bounds a string's length: a decoder refuses past it before
// allocating.
const MaxString = 64 << 10

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("route: malformed")

// AppendItem appends it's encoding.
func AppendItem(dst []byte, it frontier.Item) []byte {
	dst = appendString(dst, it.URL)
	dst = appendString(dst, it.Host)
	for _, n := range [...]int{it.Depth, it.Level, it.Redirects, it.Attempts, it.ShapeRun} {
		dst = binary.AppendUvarint(dst, uint64(max(n, 0)))
	}
	dst = appendString(dst, it.Via)
	dst = binary.AppendUvarint(dst, uint64(it.Job))
	return binary.AppendUvarint(dst, uint64(max(it.Requisite, 0)))
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// Reader decodes items, and the uvarints a message frames them with, from
// the front of B. Its first error sticks in Err (wrapping ErrMalformed);
// every read after it returns a zero value.
type Reader struct {
	B   []byte
	Err error
}

// Uvarint reads a uvarint no greater than limit; what names it in errors.
func (r *Reader) Uvarint(what string, limit uint64) uint64 {
	if r.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.B)
	if n <= 0 || (n > 1 && r.B[n-1] == 0) { // a varint's last byte is never 0 but in "0"
		r.Err = fmt.Errorf("%w: %s: bad or overlong varint", ErrMalformed, what)
		return 0
	}
	if v > limit {
		r.Err = fmt.Errorf("%w: %s %d over %d", ErrMalformed, what, v, limit)
		return 0
	}
	r.B = r.B[n:]
	return v
}

func (r *Reader) string(what string) string {
	n := r.Uvarint(what+" length", MaxString)
	if r.Err != nil {
		return ""
	}
	if uint64(len(r.B)) < n {
		r.Err = fmt.Errorf("%w: %s: %d bytes, %d left", ErrMalformed, what, n, len(r.B))
		return ""
	}
	s := string(r.B[:n])
	r.B = r.B[n:]
	return s
}

// Item reads one item (AppendItem's form).
func (r *Reader) Item() frontier.Item {
	it := r.ItemV1()
	it.Requisite = int(r.Uvarint("requisite", 1<<10))
	return it
}

// ItemV1 reads one item in the form before Requisite: AppendItem's
// without its last field.
func (r *Reader) ItemV1() frontier.Item {
	var it frontier.Item
	it.URL = r.string("URL")
	it.Host = r.string("host")
	it.Depth = int(r.Uvarint("depth", 1<<20))
	it.Level = int(r.Uvarint("level", 255))
	it.Redirects = int(r.Uvarint("redirects", 1<<10))
	it.Attempts = int(r.Uvarint("attempts", 1<<10))
	it.ShapeRun = int(r.Uvarint("shape run", 1<<20))
	it.Via = r.string("via")
	it.Job = uint32(r.Uvarint("job", 1<<32-1))
	if r.Err == nil && (it.URL == "" || it.Host == "") {
		r.Err = fmt.Errorf("%w: item without a URL or host", ErrMalformed)
	}
	return it
}

// DecodeItem decodes an outbox entry's value (an entry written before
// Requisite ends at Job: a page).
func DecodeItem(b []byte) (frontier.Item, error) {
	r := Reader{B: b}
	it := r.ItemV1()
	if r.Err == nil && len(r.B) > 0 {
		it.Requisite = int(r.Uvarint("requisite", 1<<10))
	}
	if r.Err == nil && len(r.B) != 0 {
		r.Err = fmt.Errorf("%w: %d bytes after the item", ErrMalformed, len(r.B))
	}
	return it, r.Err
}
