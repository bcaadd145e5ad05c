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
