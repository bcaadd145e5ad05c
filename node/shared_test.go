package node

import (
	"fmt"
	"testing"
	"time"
)

func TestSharedPagesKeepsTheLastMax(t *testing.T) {
	s := newSharedPages(3)
	for i := range 5 {
		s.put(fmt.Sprint("u", i), &sharedPage{status: 200 + i})
	}
	for i, want := range []int{0, 0, 202, 203, 204} {
		p := s.get(fmt.Sprint("u", i))
		if (p == nil) != (want == 0) || (p != nil && p.status != want) {
			t.Errorf("get(u%d) = %+v, want status %d (0: gone)", i, p, want)
		}
	}
	s.put("u3", &sharedPage{status: 404, at: time.Unix(1, 0)}) // replaced in place: nothing evicted
	if p := s.get("u3"); p == nil || p.status != 404 {
		t.Errorf("get(u3) after a second put = %+v, want the new page", p)
	}
	if s.get("u2") == nil || len(s.pages) != 3 {
		t.Errorf("a second put of a held URL evicted another: %d held", len(s.pages))
	}
	off := newSharedPages(0)
	off.put("u", &sharedPage{})
	if off.get("u") != nil {
		t.Error("a table of size 0 held a page")
	}
}
