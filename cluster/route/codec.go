package route

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/trawl-crawler/trawl/frontier"
)

// Message layout (a batch of URLs for one partition; part of the fleet's
// protocol). Every integer is a uvarint, every string a uvarint length and
// its bytes:
//
//	+---------+-------+----------------------------------------------+
//	| version | count | count items:                                 |
//	| 0x01    |       | URL, Host, Depth, Level, Redirects, Attempts,|
//	|         |       | ShapeRun, Via, Job                           |
//	+---------+-------+----------------------------------------------+
//
// An outbox entry's value is one item in the same form, without version
// and count. Seq is not carried: the owner's queue gives it.
const (
	version = 1
	// MaxItems bounds a message's count, MaxString a string's length:
	// a decoder refuses past them before allocating.
	MaxItems  = 10_000
	MaxString = 64 << 10
)

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
	return binary.AppendUvarint(dst, uint64(it.Job))
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendMessage appends a message holding items.
func AppendMessage(dst []byte, items []frontier.Item) []byte {
	dst = append(dst, version)
	dst = binary.AppendUvarint(dst, uint64(len(items)))
	for _, it := range items {
		dst = AppendItem(dst, it)
	}
	return dst
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint(what string, limit uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || (n > 1 && r.b[n-1] == 0) { // a varint's last byte is never 0 but in "0"
		r.err = fmt.Errorf("%w: %s: bad or overlong varint", ErrMalformed, what)
		return 0
	}
	if v > limit {
		r.err = fmt.Errorf("%w: %s %d over %d", ErrMalformed, what, v, limit)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) string(what string) string {
	n := r.uvarint(what+" length", MaxString)
	if r.err != nil {
		return ""
	}
	if uint64(len(r.b)) < n {
		r.err = fmt.Errorf("%w: %s: %d bytes, %d left", ErrMalformed, what, n, len(r.b))
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) item() frontier.Item {
	var it frontier.Item
	it.URL = r.string("URL")
	it.Host = r.string("host")
	it.Depth = int(r.uvarint("depth", 1<<20))
	it.Level = int(r.uvarint("level", 255))
	it.Redirects = int(r.uvarint("redirects", 1<<10))
	it.Attempts = int(r.uvarint("attempts", 1<<10))
	it.ShapeRun = int(r.uvarint("shape run", 1<<20))
	it.Via = r.string("via")
	it.Job = uint32(r.uvarint("job", 1<<32-1))
	if r.err == nil && (it.URL == "" || it.Host == "") {
		r.err = fmt.Errorf("%w: item without a URL or host", ErrMalformed)
	}
	return it
}

// DecodeItem decodes an outbox entry's value.
func DecodeItem(b []byte) (frontier.Item, error) {
	r := reader{b: b}
	it := r.item()
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes after the item", ErrMalformed, len(r.b))
	}
	return it, r.err
}

// DecodeMessage decodes a message.
func DecodeMessage(b []byte) ([]frontier.Item, error) {
	if len(b) == 0 || b[0] != version {
		return nil, fmt.Errorf("%w: not a version %d message", ErrMalformed, version)
	}
	r := reader{b: b[1:]}
	n := r.uvarint("count", MaxItems)
	if r.err != nil {
		return nil, r.err
	}
	items := make([]frontier.Item, 0, min(n, uint64(len(r.b))/2+1))
	for i := uint64(0); i < n; i++ {
		it := r.item()
		if r.err != nil {
			return nil, fmt.Errorf("item %d: %w", i, r.err)
		}
		items = append(items, it)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after %d items", ErrMalformed, len(r.b), n)
	}
	return items, nil
}
