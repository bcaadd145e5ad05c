package node

import (
	"crypto/sha256"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/dedup"
	"github.com/trawl-crawler/trawl/simhash"
)

// ContentIndex is the content-seen gate the node asks about every payload
// and page it fetches: by default its own store's (dedup.Index, which
// satisfies it); a fleet's shards it over the members (cluster/fpshard,
// given with SetContentIndex). The node puts what it adds into a page's
// completion batch b, after the page's WARC records are durable; an index
// that sends adds elsewhere does so once b has been applied (store.Batch
// OnDone, which runs on the frontier's one committer: it must not wait),
// never before. A lookup that fails counts as not seen: the page is
// archived in full.
type ContentIndex interface {
	Exact(sum [sha256.Size]byte) (dedup.Original, bool, error)
	AddExact(b *store.Batch, sum [sha256.Size]byte, o dedup.Original) error
	Near(p simhash.Print, minResemblance float64) (dedup.Match, bool, error)
	AddNear(b *store.Batch, p simhash.Print, url string, job uint32) error
}

// SetContentIndex makes ci the node's content-seen gate in place of its
// store's own (Dedup). Call it before the node fetches: a partitioned
// node, before it serves a partition.
func (n *Node) SetContentIndex(ci ContentIndex) { n.content.Store(&ci) }

// Dedup returns the content-seen gate over the node's own store, which a
// ContentIndex that shards it (cluster/fpshard) keeps its share in.
func (n *Node) Dedup() *dedup.Index { return n.dedup }

// contentIndex returns SetContentIndex's index, and false if none was
// set (the store's own, n.dedup, is then the gate).
func (n *Node) contentIndex() (ContentIndex, bool) {
	if ci := n.content.Load(); ci != nil {
		return *ci, true
	}
	return n.dedup, false
}
