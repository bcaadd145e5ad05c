package route

import (
	"encoding/binary"
	"fmt"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/outbox"
)

// Message layout (a batch of URLs for one partition; part of the fleet's
// protocol). Every integer is a uvarint:
//
//	+---------+-------+----------------------------------------------+
//	| version | count | count items, each in outbox.AppendItem's     |
//	| 0x02    |       | form: URL, Host, Depth, Level, Redirects,    |
//	|         |       | Attempts, ShapeRun, Via, Job, Requisite      |
//	+---------+-------+----------------------------------------------+
//
// An outbox entry's value is one item in the same form, without version
// and count. Seq is not carried: the owner's queue gives it. Version 1
// messages (items without Requisite: pages) are still read, so a member
// of the version before can route to this one.
const (
	version = 2
	// MaxItems bounds a message's count: a decoder refuses past it
	// before allocating (outbox.MaxString bounds a string's length).
	MaxItems = 10_000
)

// ErrMalformed is wrapped by every decoding error (outbox.ErrMalformed,
// which an item's errors wrap too).
var ErrMalformed = outbox.ErrMalformed

// AppendMessage appends a message holding items: of version 1 when none
// is a requisite, so that a member of the version before reads what this
// one routes unless it is a requisite (which it would drop with the
// message).
func AppendMessage(dst []byte, items []frontier.Item) []byte {
	v1 := true
	for _, it := range items {
		v1 = v1 && it.Requisite <= 0
	}
	if v1 {
		dst = append(dst, 1)
	} else {
		dst = append(dst, version)
	}
	dst = binary.AppendUvarint(dst, uint64(len(items)))
	for _, it := range items {
		dst = outbox.AppendItem(dst, it)
		if v1 {
			dst = dst[:len(dst)-1] // Requisite 0, its last byte: not in version 1
		}
	}
	return dst
}

// DecodeMessage decodes a message.
func DecodeMessage(b []byte) ([]frontier.Item, error) {
	if len(b) == 0 || b[0] != version && b[0] != 1 {
		return nil, fmt.Errorf("%w: not a version 1 or %d message", ErrMalformed, version)
	}
	v1 := b[0] == 1
	r := outbox.Reader{B: b[1:]}
	n := r.Uvarint("count", MaxItems)
	if r.Err != nil {
		return nil, r.Err
	}
	items := make([]frontier.Item, 0, min(n, uint64(len(r.B))/2+1))
	for i := uint64(0); i < n; i++ {
		var it frontier.Item
		if v1 {
			it = r.ItemV1()
		} else {
			it = r.Item()
		}
		if r.Err != nil {
			return nil, fmt.Errorf("item %d: %w", i, r.Err)
		}
		items = append(items, it)
	}
	if len(r.B) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after %d items", ErrMalformed, len(r.B), n)
	}
	return items, nil
}
