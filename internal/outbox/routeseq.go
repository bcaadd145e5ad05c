package outbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// RouteSeqKey returns the key of the sequence of the last routed-URL
// message folded into partition p: a meta key, 8 bytes big-endian.
func RouteSeqKey(p partition.ID) []byte {
	return store.MetaKey(fmt.Sprintf("route-seq/%d", p))
}

// SetRouteSeq writes seq as partition p's route sequence into b. The fold
// of a routed message calls it in the batch that writes the message's URLs,
// so that the two are durable together.
func SetRouteSeq(b *store.Batch, p partition.ID, seq uint64) error {
	return b.Set(RouteSeqKey(p), binary.BigEndian.AppendUint64(nil, seq))
}

// RouteSeq returns partition p's route sequence in db; 0 when none was
// folded (or the partition was cleared).
func RouteSeq(db *store.DB, p partition.ID) (uint64, error) {
	v, err := db.Get(RouteSeqKey(p))
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("outbox: partition %d: route seq: %w", p, err)
	}
	return DecodeRouteSeq(p, v)
}

// DecodeRouteSeq decodes v, the value of RouteSeqKey(p).
func DecodeRouteSeq(p partition.ID, v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("outbox: partition %d: route seq of %d bytes, want 8", p, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// routeSeqPrefix is what every RouteSeqKey starts with.
var routeSeqPrefix = store.MetaKey("route-seq/")

// RouteSeqPartition returns the partition whose route sequence key is
// key, and false for any other key.
func RouteSeqPartition(key []byte) (partition.ID, bool) {
	if !bytes.HasPrefix(key, routeSeqPrefix) {
		return 0, false
	}
	digits := key[len(routeSeqPrefix):]
	if len(digits) == 0 || len(digits) > 5 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	p := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		p = p*10 + int(c-'0')
	}
	if p >= partition.Count {
		return 0, false
	}
	return partition.ID(p), true
}
