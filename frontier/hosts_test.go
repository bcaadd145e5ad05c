package frontier

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHostTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		hash func(string) uint64
	}{
		{"maphash", nil},
		{"every hash collides", func(string) uint64 { return 7 }},
		{"half collide", func(s string) uint64 { return uint64(len(s) % 2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := newHostTable()
			if tc.hash != nil {
				tab.hash = tc.hash
			}
			const n = 3*hostChunk + 17
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("h%d.example", i)
				if i%1000 == 0 {
					names[i] = strings.Repeat("x", 300+i/1000) // longer than a DNS name
				}
				if tab.find(names[i]) != nil {
					t.Fatalf("find(%q) before add = non-nil", names[i])
				}
				if h := tab.add(names[i]); h.id != hostID(i) || h.heapIdx != -1 {
					t.Fatalf("add(%q) = id %d heapIdx %d, want %d, -1", names[i], h.id, h.heapIdx, i)
				}
			}
			if tab.len() != n {
				t.Fatalf("len = %d, want %d", tab.len(), n)
			}
			for i, name := range names {
				h := tab.find(name)
				if h == nil || h.id != hostID(i) || tab.name(h) != name {
					t.Fatalf("find(%q) = %v, want id %d", name, h, i)
				}
				if h != tab.at(hostID(i)) {
					t.Fatalf("find(%q) and at(%d) differ", name, i)
				}
			}
			if h := tab.find("missing.example"); h != nil {
				t.Errorf("find(missing) = id %d, want nil", h.id)
			}
			seen := 0
			tab.each(func(h *hostState) {
				if h.id != hostID(seen) {
					t.Fatalf("each: host %d at position %d", h.id, seen)
				}
				seen++
			})
			if seen != n {
				t.Errorf("each visited %d hosts, want %d", seen, n)
			}
		})
	}
}

func TestNameArenaLongNames(t *testing.T) {
	var a nameArena
	long := strings.Repeat("y", nameChunk+5)
	in := []string{"", "a.test", long, "b.test", strings.Repeat("z", nameChunk-3), "c.test"}
	refs := make([]nameRef, len(in))
	for i, s := range in {
		refs[i] = a.add(s)
	}
	for i, s := range in {
		if got := a.get(refs[i]); got != s {
			t.Errorf("get(add(%d-byte name)) = %d bytes, want the name back", len(s), len(got))
		}
	}
}

func TestEpochClock(t *testing.T) {
	epoch := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	c := epochClock{epoch: epoch}
	for _, tm := range []time.Time{epoch, epoch.Add(-time.Hour), epoch.Add(90 * 24 * time.Hour), time.Unix(0, 1)} {
		if got := c.time(c.mono(tm)); !got.Equal(tm) {
			t.Errorf("time(mono(%v)) = %v", tm, got)
		}
	}
	if m := c.mono(time.Time{}); m != noTime {
		t.Errorf("mono(zero time) = %d, want noTime", m)
	}
	if got := c.time(noTime); !got.IsZero() {
		t.Errorf("time(noTime) = %v, want the zero time", got)
	}
	if c.mono(epoch.Add(-time.Nanosecond)) >= c.mono(epoch) {
		t.Error("mono does not keep order")
	}
}

// TestHeapTies checks that hosts of equal keys leave both heaps in the
// store's key order, partition then name, whatever their names share: the
// entries compare an 8-byte prefix of the name before the name itself.
func TestHeapTies(t *testing.T) {
	tab := newHostTable()
	names := []string{"", "a", "a\x00", "ab", "www.exam", "www.example.com", "www.example.org", "www.exa", "h0000123.bench.test", "h0000124.bench.test", "h000012", "zz", "www.examplf"}
	for i := range 200 {
		names = append(names, fmt.Sprintf("www.example-%d.test", i*7%200))
	}
	ready, runnable := hostHeap{t: tab}, runHeap{t: tab}
	for _, n := range names {
		h := tab.add(n)
		h.nextAllowed = 5
		heap.Push(&ready, h)
		heap.Push(&runnable, h)
	}
	want := slices.Clone(names)
	slices.SortFunc(want, func(a, b string) int {
		return cmp.Or(cmp.Compare(partOf(a), partOf(b)), strings.Compare(a, b))
	})
	for _, q := range []heap.Interface{&ready, &runnable} {
		var got []string
		for q.Len() > 0 {
			got = append(got, tab.name(heap.Pop(q).(*hostState)))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%T popped\n%q\nwant\n%q", q, got, want)
		}
	}
}
