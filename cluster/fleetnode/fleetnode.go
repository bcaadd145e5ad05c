// Package fleetnode declares what the fleet's packages (cluster/fleet,
// cluster/finish, cluster/catalog) need of a member's node: Node, one
// interface, which *node.Node satisfies. They use the node through it
// alone (catalog.Node, the view the HTTP API serves on a member, embeds
// the *node.Node it was opened with, for the API's other calls).
//
// What the fleet needs below the node is not reached through it: the
// node's store (*store.DB: checkpoints, route sequences), its outbox
// (*outbox.Outbox: the route pump) and its content index (*dedup.Index:
// cluster/fpshard) are handed to the fleet's packages when a member is
// wired, as the lower-level pieces they are.
package fleetnode

import (
	"context"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/job"
)

// Node is a partitioned node (node.Options.Partitioned) as the fleet
// drives it.
type Node interface {
	// Partitions returns the partitions the node serves.
	Partitions() []partition.ID
	// ServePartition starts serving p, whose keys are in the store,
	// leasing none of its hosts before hold (zero: at once).
	ServePartition(p partition.ID, hold time.Time) error
	// ReleasePartition stops serving p once its leases are done and
	// durable, or ctx ends (then it leases nothing of p).
	ReleasePartition(ctx context.Context, p partition.ID) error
	// Fold writes URLs routed to partition p, with the sequence of the
	// message that carried them, in one durable batch.
	Fold(p partition.ID, seq uint64, items []frontier.Item) error
	// SetFence gives the time after which the node must start no fetch.
	SetFence(fence func() time.Time)

	// Jobs and Job return the node's crawls.
	Jobs() []*job.Job
	Job(id job.ID) *job.Job
	// Adopt makes the node hold the crawl of a record (the fleet's
	// catalog), creating or changing it.
	Adopt(r job.Record) (*job.Job, error)
	// Pause, Resume, Cancel, AddSeeds and EditExclusions change one
	// crawl on this node alone.
	Pause(id job.ID) error
	Resume(id job.ID) error
	Cancel(id job.ID) error
	AddSeeds(id job.ID, seeds []string) (int, error)
	EditExclusions(id job.ID, add, remove []string) (*job.Exclusions, error)
	// Quiet reports whether the node has no work for any crawl, and the
	// crawls running; IdleJobs those of ids it has no work for.
	Quiet() (quiet bool, running []job.ID)
	IdleJobs(ids []job.ID) []job.ID
}
