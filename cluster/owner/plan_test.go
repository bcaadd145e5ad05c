package owner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trawl-crawler/trawl/cluster/assign"
)

func TestPlanCases(t *testing.T) {
	// Four partitions over a, b: the table is fixed, so the cases can name
	// which partitions each member is given.
	live := []Member{{Name: "a"}, {Name: "b"}}
	target := assign.Of(4, []string{"a", "b"})
	var forA, forB int = -1, -1
	for p, m := range target {
		if m == "a" && forA < 0 {
			forA = p
		}
		if m == "b" && forB < 0 {
			forB = p
		}
	}
	owners := func(kv map[int]Claim) []Claim {
		out := make([]Claim, 4)
		for p, c := range kv {
			out[p] = c
		}
		return out
	}
	only := func(acts []Action, p int) []Action {
		var out []Action
		for _, a := range acts {
			if a.Partition == p {
				out = append(out, a)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		live []Member
		kv   map[int]Claim
		held map[int]bool
		p    int
		want []Action
	}{
		{"free key, mine: take", live, nil, nil, forA, []Action{{Kind: Take, Partition: forA}}},
		{"deleted key, mine: take at its revision", live, map[int]Claim{forA: {"", 9}}, nil, forA, []Action{{Kind: Take, Partition: forA, Revision: 9}}},
		{"dead owner, mine: takeover", live, map[int]Claim{forA: {"c", 4}}, nil, forA, []Action{{Kind: Take, Partition: forA, Revision: 4, Takeover: true}}},
		{"live owner, mine: wait for its release", live, map[int]Claim{forA: {"b", 4}}, nil, forA, nil},
		{"mine, held: nothing", live, map[int]Claim{forA: {"a", 2}}, map[int]bool{forA: true}, forA, nil},
		{"mine, not held: adopt", live, map[int]Claim{forA: {"a", 2}}, nil, forA, []Action{{Kind: Adopt, Partition: forA, Revision: 2}}},
		{"mine in the bucket, b's in the table: release", live, map[int]Claim{forB: {"a", 3}}, map[int]bool{forB: true}, forB, []Action{{Kind: Release, Partition: forB, Revision: 3}}},
		{"held but b owns it: drop", live, map[int]Claim{forB: {"b", 3}}, map[int]bool{forB: true}, forB, []Action{{Kind: Drop, Partition: forB}}},
		{"free key, b's: nothing", live, nil, nil, forB, nil},
		{"leaving: release even what the table would give me", []Member{{Name: "a", Leaving: true}, {Name: "b"}}, map[int]Claim{forA: {"a", 2}}, map[int]bool{forA: true}, forA, []Action{{Kind: Release, Partition: forA, Revision: 2}}},
		{"b leaving, its partition: wait for its release", []Member{{Name: "a"}, {Name: "b", Leaving: true}}, map[int]Claim{forB: {"b", 2}}, nil, forB, nil},
		{"b leaving, released: take", []Member{{Name: "a"}, {Name: "b", Leaving: true}}, map[int]Claim{forB: {"", 3}}, nil, forB, []Action{{Kind: Take, Partition: forB, Revision: 3}}},
		{"not live myself: no take", []Member{{Name: "b"}}, nil, nil, forA, nil},
		{"not live myself, held and still mine: keep (the runner fences)", []Member{{Name: "b"}}, map[int]Claim{forA: {"a", 2}}, map[int]bool{forA: true}, forA, nil},
		{"not live myself, held, taken: drop", []Member{{Name: "b"}}, map[int]Claim{forA: {"b", 5}}, map[int]bool{forA: true}, forA, []Action{{Kind: Drop, Partition: forA}}},
	} {
		got := only(Plan("a", tc.live, owners(tc.kv), tc.held), tc.p)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Plan = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// fleet simulates members acting on a shared owners bucket with
// compare-and-set semantics, in random interleavings.
type fleet struct {
	count     int
	kv        []Claim
	rev       uint64
	held      map[string]map[int]bool
	live      []Member
	moves     int // partitions that changed hands (a Take)
	takeovers int // Takes from a dead owner
	serving   map[int]int
}

func newFleet(count int) *fleet {
	return &fleet{count: count, kv: make([]Claim, count), held: map[string]map[int]bool{}, serving: map[int]int{}}
}

func (f *fleet) cas(p int, rev uint64, owner string) bool {
	if f.kv[p].Revision != rev {
		return false
	}
	f.rev++
	f.kv[p] = Claim{Owner: owner, Revision: f.rev}
	return true
}

// step lets member m plan against the bucket as it is and act.
func (f *fleet) step(t *testing.T, m string) int {
	acts := Plan(m, f.live, slices.Clone(f.kv), f.held[m])
	for _, a := range acts {
		switch a.Kind {
		case Take:
			if f.cas(a.Partition, a.Revision, m) {
				f.held[m][a.Partition] = true
				f.moves++
				if a.Takeover {
					f.takeovers++
				}
			}
		case Adopt:
			f.held[m][a.Partition] = true
		case Release:
			delete(f.held[m], a.Partition)
			f.cas(a.Partition, a.Revision, "")
		case Drop:
			delete(f.held[m], a.Partition)
		}
	}
	// Invariant: a partition is served only by the member the bucket names.
	for p := 0; p < f.count; p++ {
		n := 0
		for mem, h := range f.held {
			if h[p] {
				n++
				if f.kv[p].Owner != mem {
					t.Fatalf("%s serves partition %d but the bucket names %q", mem, p, f.kv[p].Owner)
				}
			}
		}
		if n > 1 {
			t.Fatalf("partition %d served by %d members", p, n)
		}
	}
	return len(acts)
}

// settle runs members in random order until none has anything to do.
func (f *fleet) settle(t *testing.T, r *rand.Rand) {
	for round := 0; round < 50; round++ {
		var order []string
		for _, m := range f.live {
			order = append(order, m.Name)
		}
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		busy := 0
		for _, m := range order {
			busy += f.step(t, m)
		}
		if busy == 0 {
			return
		}
	}
	t.Fatal("fleet did not settle in 50 rounds")
}

func (f *fleet) join(m string) {
	f.live = append(f.live, Member{Name: m})
	f.held[m] = map[int]bool{}
}

// die removes m from the live set (its membership expired) without letting
// it act: its held set stays, as a dead process's would.
func (f *fleet) die(m string) {
	f.live = slices.DeleteFunc(f.live, func(x Member) bool { return x.Name == m })
	delete(f.held, m)
}

func (f *fleet) staying() []string {
	var out []string
	for _, m := range f.live {
		if !m.Leaving {
			out = append(out, m.Name)
		}
	}
	return out
}

func (f *fleet) check(t *testing.T) {
	t.Helper()
	target := assign.Of(f.count, f.staying())
	for p := 0; p < f.count; p++ {
		if f.kv[p].Owner != target[p] || !f.held[target[p]][p] {
			t.Fatalf("partition %d: bucket %q, table %q, served %v", p, f.kv[p].Owner, target[p], f.held[target[p]][p])
		}
	}
}

// TestFleetSettles plays joins, a death and a leave through Plan and the
// bucket's compare-and-set, in random interleavings: at rest every
// partition is owned and served exactly once, by its table's member, and a
// 4th member's join moves what the table moves.
func TestFleetSettles(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		f := newFleet(256)
		for i := 1; i <= 3; i++ {
			f.join(fmt.Sprintf("node-%d", i))
		}
		f.settle(t, r)
		f.check(t)

		before := slices.Clone(f.kv)
		f.moves = 0
		f.join("node-4")
		f.settle(t, r)
		f.check(t)
		moved := 0
		for p := range before {
			if before[p].Owner != f.kv[p].Owner {
				moved++
			}
		}
		if want := assign.Moved(assign.Of(256, f.staying()[:3]), assign.Of(256, f.staying())); moved != want || f.moves != want {
			t.Fatalf("seed %d: the join moved %d partitions (%d takes), the table %d", seed, moved, f.moves, want)
		}

		// node-2 dies: its partitions are taken over by the rest.
		had := 0
		for _, c := range f.kv {
			if c.Owner == "node-2" {
				had++
			}
		}
		f.die("node-2")
		f.settle(t, r)
		f.check(t)
		if f.takeovers != had {
			t.Fatalf("seed %d: node-2 died owning %d partitions; %d takeovers", seed, had, f.takeovers)
		}
		f.takeovers = 0

		// node-5 joins: the remaining members release to it in turn.
		f.join("node-5")
		f.settle(t, r)
		f.check(t)

		// node-1 leaves cleanly: it releases everything, others take it
		// without a takeover; then its membership goes.
		f.live[0].Leaving = true
		f.settle(t, r)
		if len(f.held["node-1"]) != 0 {
			t.Fatalf("seed %d: leaving node-1 still serves %d partitions", seed, len(f.held["node-1"]))
		}
		f.die("node-1")
		f.settle(t, r)
		f.check(t)
		if f.takeovers != 0 {
			t.Fatalf("seed %d: %d takeovers after joins and a clean leave, want none", seed, f.takeovers)
		}
	}
}
