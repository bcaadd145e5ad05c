package urlseen

import (
	"fmt"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemAdd(t *testing.T) {
	var s Mem
	steps := []struct {
		url  string
		want bool
	}{
		{"http://a.test/", true},
		{"http://a.test/", false},
		{"http://a.test/x", true},
		{"https://a.test/", true},
		{"http://a.test/x", false},
	}
	for _, st := range steps {
		if got, err := s.Add(st.url); got != st.want || err != nil {
			t.Errorf("Add(%q) = %v, %v; want %v", st.url, got, err, st.want)
		}
	}
	if s.Len() != 3 {
		t.Errorf("Len() = %d, want 3", s.Len())
	}
}

func TestMemConcurrentExactlyOnce(t *testing.T) {
	var s Mem
	var wg sync.WaitGroup
	var mu sync.Mutex
	newCount := map[string]int{}
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				u := fmt.Sprintf("http://h%d.test/%d", (i+g)%10, i)
				if isNew, _ := s.Add(u); isNew {
					mu.Lock()
					newCount[u]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for u, n := range newCount {
		if n != 1 {
			t.Errorf("%s reported new %d times", u, n)
		}
	}
	if len(newCount) != s.Len() {
		t.Errorf("%d URLs reported new, Len() = %d", len(newCount), s.Len())
	}
}

func BenchmarkMemAddNew(b *testing.B) {
	var s Mem
	urls := make([]string, b.N)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://h%d.test/page/%d", i%1000, i)
	}
	b.ResetTimer()
	for i := range b.N {
		s.Add(urls[i])
	}
}
