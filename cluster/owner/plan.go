// Package owner keeps every partition of a fleet owned by exactly one live
// node. Members announce themselves in a JetStream key-value bucket whose
// entries expire when not renewed; owners are recorded in another bucket,
// one key per partition, changed only by compare-and-set on the key's
// revision, so two nodes can never both hold a claim. Each node computes
// the same target table from the live members (package assign) and moves
// towards it: it claims what the table gives it once the key is free or its
// owner is no longer live, and releases what the table gives a live other
// member after its handler has checkpointed it.
//
// The decision is Plan, a pure function; Runner does the I/O. An owner that
// cannot renew its membership stops serving its partitions before its
// membership can expire (fencing), so a taker never overlaps it; one whose
// reconciliation is stuck in a step stops renewing on purpose
// (Options.StuckAfter), so that the others take its share.
package owner

import (
	"fmt"

	"github.com/trawl-crawler/trawl/cluster/assign"
)

// Claim is the owners bucket's record of one partition: the owning
// member's name ("" when the key is absent or deleted) and the key's
// revision, which a compare-and-set names (0 when the key never existed).
type Claim struct {
	Owner    string
	Revision uint64
}

// Kind says what an Action does.
type Kind uint8

const (
	// Take: set the partition's key to this member (create if the key is
	// free, else update at Revision), then serve the partition. Takeover
	// says the previous owner died holding it: its last moves are not in
	// any checkpoint, and hosts must be held (see package docs).
	Take Kind = iota + 1
	// Adopt: the key already names this member (a restart, or a fence
	// lifted before anyone took over): serve the partition again.
	Adopt
	// Release: checkpoint and stop serving the partition, then delete its
	// key at Revision, for the member the table now gives it to.
	Release
	// Drop: stop serving the partition at once, without a checkpoint:
	// another member owns it now (this one was fenced or presumed dead).
	Drop
)

func (k Kind) String() string {
	switch k {
	case Take:
		return "take"
	case Adopt:
		return "adopt"
	case Release:
		return "release"
	case Drop:
		return "drop"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Action is one step towards the target table.
type Action struct {
	Kind      Kind
	Partition int
	Revision  uint64 // the key's revision for Take and Release
	Takeover  bool   // Take only: the previous owner died holding the key
}

func (a Action) String() string {
	s := fmt.Sprintf("%s %d@%d", a.Kind, a.Partition, a.Revision)
	if a.Takeover {
		s += " takeover"
	}
	return s
}

// Member is a live member of the fleet, as its membership entry says.
// A leaving member still owns what it holds, but the table gives it
// nothing: it releases its partitions, and others wait for each release.
type Member struct {
	Name    string
	Leaving bool
}

// Plan returns the actions that move member me towards the table assigned
// over the live members that are not leaving, given the owners bucket
// (owners[p] for every partition) and the partitions me serves now (held).
// It returns nothing but Drops when me is not among members (its own
// membership lapsed: it may claim nothing), and nothing when every member
// is leaving. Actions come in partition order.
func Plan(me string, members []Member, owners []Claim, held map[int]bool) []Action {
	var out []Action
	var staying []string
	live := map[string]bool{}
	for _, m := range members {
		live[m.Name] = true
		if !m.Leaving {
			staying = append(staying, m.Name)
		}
	}
	if !live[me] {
		for p := range owners {
			if held[p] && owners[p].Owner != me {
				out = append(out, Action{Kind: Drop, Partition: p})
			}
		}
		return out
	}
	if len(staying) == 0 {
		// Every member is leaving (the whole fleet stops): there is no one
		// to hand a partition to, and a release would only checkpoint it
		// for no taker. Each keeps its claims and its store's state, to
		// adopt when it comes back (Leave ends without releasing).
		return out
	}
	target := assign.Of(len(owners), staying)
	for p, c := range owners {
		mine := target != nil && target[p] == me
		switch {
		case c.Owner != me && held[p]:
			out = append(out, Action{Kind: Drop, Partition: p})
		case mine && c.Owner == "":
			out = append(out, Action{Kind: Take, Partition: p, Revision: c.Revision})
		case mine && c.Owner != me && !live[c.Owner]:
			out = append(out, Action{Kind: Take, Partition: p, Revision: c.Revision, Takeover: true})
		case c.Owner == me && !mine:
			out = append(out, Action{Kind: Release, Partition: p, Revision: c.Revision})
		case c.Owner == me && !held[p]:
			out = append(out, Action{Kind: Adopt, Partition: p, Revision: c.Revision})
		}
	}
	return out
}
