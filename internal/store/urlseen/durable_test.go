package urlseen

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
	"github.com/trawl-crawler/trawl/urlnorm"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openStore(t testing.TB, fs vfs.FS, dir string) *store.DB {
	t.Helper()
	db := storetest.OpenDir(t, dir, store.Options{FS: fs, Logger: quiet, CacheSize: 8 << 20})
	return db
}

func newDurable(t testing.TB, db *store.DB, opts DurableOptions) *Durable {
	t.Helper()
	d, err := NewDurable(db, opts)
	if err != nil {
		t.Fatalf("NewDurable = %v", err)
	}
	return d
}

var _ Set = (*Durable)(nil)

func TestDurableAdd(t *testing.T) {
	db := openStore(t, vfs.NewMem(), "/s")
	defer db.Close()
	d := newDurable(t, db, DurableOptions{ExpectedURLs: 1000})
	steps := []struct {
		url  string
		want bool
	}{
		{"http://a.test/", true},
		{"http://a.test/", false},
		{"http://a.test/x", true},
		{"https://a.test/", true},
		{"http://a.test:8080/", true},
		{"http://[::1]:8080/x", true},
		{"http://a.test/x", false},
	}
	for _, st := range steps {
		if got, err := d.Add(st.url); got != st.want || err != nil {
			t.Errorf("Add(%q) = %v, %v; want %v", st.url, got, err, st.want)
		}
	}
	if d.Len() != 5 {
		t.Errorf("Len() = %d, want 5", d.Len())
	}
	if _, err := d.Add("not a url"); err == nil {
		t.Errorf("Add(%q) = nil error, want one", "not a url")
	}
	if ok, err := db.Has(store.SeenKey(0, "a.test", "http://a.test:8080/")); !ok || err != nil {
		t.Errorf("Has(SeenKey(0, a.test, http://a.test:8080/)) = %v, %v; want true", ok, err)
	}
}

// TestDurableCache passes one host's URLs (one stripe) through the gate
// three times, for two jobs, with far more URLs than the stripe's cache
// holds: the second and third passes report nothing new, whether answered
// by the cache or the store; the other job still sees every URL once; and
// the cache never holds more than its two generations.
func TestDurableCache(t *testing.T) {
	db := openStore(t, vfs.NewMem(), "/s")
	defer db.Close()
	d := newDurable(t, db, DurableOptions{ExpectedURLs: 100_000})
	const n = 5 * hotKeys
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://a.test/page/%d", i)
	}
	s := &d.stripes[partitionOf(t, "http://a.test/")]
	for _, job := range []uint32{1, 2} {
		for pass := range 3 {
			// Small batches, as pages are: the same links recur a few at a time.
			for lo := 0; lo < n; lo += 40 {
				b := db.NewBatch()
				isNew, err := d.AddBatch(b, job, urls[lo:min(lo+40, n)])
				if err != nil {
					t.Fatal(err)
				}
				if err := db.Commit(b); err != nil {
					t.Fatal(err)
				}
				for i, nw := range isNew {
					if nw != (pass == 0) {
						t.Fatalf("job %d pass %d: %s new = %v", job, pass, urls[lo+i], nw)
					}
				}
				s.mu.Lock()
				size := len(s.hot) + len(s.warm)
				s.mu.Unlock()
				if size > 2*hotKeys {
					t.Fatalf("stripe cache holds %d keys, over its bound %d", size, 2*hotKeys)
				}
			}
		}
	}
	if got := d.Len(); got != 2*n {
		t.Errorf("Len() = %d, want %d", got, 2*n)
	}
	// A page's navigation, read again: cached after one store read.
	nav := urls[:40]
	for range 2 {
		b := db.NewBatch()
		if isNew, err := d.AddBatch(b, 1, nav); err != nil || slices.Contains(isNew, true) {
			t.Fatalf("AddBatch(nav) = %v, %v; want nothing new", isNew, err)
		}
		b.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range nav {
		if !s.cached(store.SeenKey(1, "a.test", u)) {
			t.Errorf("%s read twice is not in the stripe's cache", u)
		}
	}
}

func partitionOf(t *testing.T, u string) int {
	t.Helper()
	h, err := hostOf(u)
	if err != nil {
		t.Fatal(err)
	}
	return int(partition.Of(h))
}

// TestDurableFalsePositives forces a tiny filter, so that nearly every
// check is a false positive, and checks that every new URL is still new.
func TestDurableFalsePositives(t *testing.T) {
	db := openStore(t, vfs.NewMem(), "/s")
	defer db.Close()
	d := newDurable(t, db, DurableOptions{ExpectedURLs: 1, FalsePositiveRate: 0.5, MaxFilterBytes: 1}) // no room to grow
	const n = 3000
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://h%d.test/p/%d", i%37, i)
	}
	for start := 0; start < n; start += 100 {
		b := db.NewBatch()
		got, err := d.AddBatch(b, 0, urls[start:start+100])
		if err != nil {
			t.Fatal(err)
		}
		for i, isNew := range got {
			if !isNew {
				t.Errorf("AddBatch: new URL %q reported seen (a false positive dropped it)", urls[start+i])
			}
		}
		if err := db.CommitNoSync(b); err != nil {
			t.Fatal(err)
		}
	}
	if !d.MaybeSeen(0, "http://never.test/added") || !inFilter(t, d, "http://never.test/added") {
		t.Errorf("the filter is not saturated; the test proves nothing about false positives")
	}
	for _, u := range urls {
		if isNew, err := d.Add(u); isNew || err != nil {
			t.Errorf("Add(%q) again = %v, %v; want false", u, isNew, err)
		}
	}
	if d.Len() != n {
		t.Errorf("Len() = %d, want %d", d.Len(), n)
	}
}

// TestDurableBatchSemantics: duplicates within a batch, a staged URL seen
// by another batch before commit, and a discarded batch.
func TestDurableBatchSemantics(t *testing.T) {
	db := openStore(t, vfs.NewMem(), "/s")
	defer db.Close()
	d := newDurable(t, db, DurableOptions{ExpectedURLs: 1000})
	b1 := db.NewBatch()
	got, err := d.AddBatch(b1, 0, []string{"http://a.test/1", "http://a.test/1", "http://b.test/"})
	if fmt.Sprint(got) != "[true false true]" || err != nil {
		t.Errorf("AddBatch(dup) = %v, %v; want [true false true]", got, err)
	}
	// Not committed yet: another batch must still see it as seen.
	b2 := db.NewBatch()
	if isNew, err := d.AddTo(b2, 0, "http://a.test/1"); isNew || err != nil {
		t.Errorf("AddTo(staged URL) = %v, %v; want false", isNew, err)
	}
	b2.Close()
	b1.Close() // discarded: the URLs were never recorded
	if d.Len() != 0 {
		t.Errorf("Len() after discard = %d, want 0", d.Len())
	}
	if isNew, err := d.Add("http://a.test/1"); !isNew || err != nil {
		t.Errorf("Add(discarded URL) = %v, %v; want true", isNew, err)
	}
}

// TestDurableReopen: after a restart the rebuilt filter and the store keep
// every URL seen, including more URLs than the filter was sized for.
func TestDurableReopen(t *testing.T) {
	fs := vfs.NewMem()
	db := openStore(t, fs, "/s")
	d := newDurable(t, db, DurableOptions{ExpectedURLs: 100})
	const n = 1000
	var urls []string
	for i := 0; i < n; i++ {
		urls = append(urls, fmt.Sprintf("https://h%d.test/%d?q=%d", i%13, i, i))
	}
	b := db.NewBatch()
	if _, err := d.AddBatch(b, 0, urls); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openStore(t, fs, "/s")
	defer db.Close()
	d = newDurable(t, db, DurableOptions{ExpectedURLs: 100})
	if d.Len() != n {
		t.Errorf("Len() after reopen = %d, want %d", d.Len(), n)
	}
	if bits := uint(d.FilterStats().Bytes) * 8; bits < 2*n*9 || d.FilterStats().Layers != 1 { // sized for 2n, not the 100 asked for
		t.Errorf("filter has %d bits in %d layers after loading %d URLs, want one layer sized for %d", bits, d.FilterStats().Layers, n, 2*n)
	}
	for _, u := range urls {
		if !inFilter(t, d, u) {
			t.Errorf("rebuilt filter lacks %q", u)
		}
		if isNew, err := d.Add(u); isNew || err != nil {
			t.Errorf("Add(%q) after reopen = %v, %v; want false", u, isNew, err)
		}
	}
	if isNew, err := d.Add("https://new.test/"); !isNew || err != nil {
		t.Errorf("Add(new URL) after reopen = %v, %v; want true", isNew, err)
	}
}

func TestDurableConcurrentExactlyOnce(t *testing.T) {
	db := openStore(t, vfs.NewMem(), "/s")
	defer db.Close()
	d := newDurable(t, db, DurableOptions{ExpectedURLs: 50, FalsePositiveRate: 0.3})
	var wg sync.WaitGroup
	var mu sync.Mutex
	newCount := map[string]int{}
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i += 10 {
				var urls []string
				for j := i; j < i+10; j++ {
					urls = append(urls, fmt.Sprintf("http://h%d.test/%d", (j+g)%10, j))
				}
				b := db.NewBatch()
				got, err := d.AddBatch(b, 0, urls)
				if err != nil {
					t.Error(err)
					b.Close()
					return
				}
				if err := db.CommitNoSync(b); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for k, isNew := range got {
					if isNew {
						newCount[urls[k]]++
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for u, n := range newCount {
		if n != 1 {
			t.Errorf("%s reported new %d times", u, n)
		}
	}
	if len(newCount) != d.Len() {
		t.Errorf("%d URLs reported new, Len() = %d", len(newCount), d.Len())
	}
}

func TestHostOf(t *testing.T) {
	cases := []string{
		"http://a.test/",
		"https://a.test:8443/x?y#z",
		"http://xn--bcher-kva.example/",
		"http://[::1]:8080/",
		"http://[2001:db8::1]/",
		"http://10.0.0.1:80/x",
		"https://a.test?x",
		"http://a.test",
	}
	for _, c := range cases {
		u, err := url.Parse(c)
		if err != nil {
			t.Fatal(err)
		}
		want := urlnorm.HostKey(u)
		if got, err := hostOf(c); got != want || err != nil {
			t.Errorf("hostOf(%q) = %q, %v; want %q", c, got, err, want)
		}
	}
	for _, c := range []string{"", "a.test/x", "http:///x", "mailto:x@y"} {
		if got, err := hostOf(c); err == nil {
			t.Errorf("hostOf(%q) = %q, nil; want an error", c, got)
		}
	}
}

func TestDurableOptionsValidate(t *testing.T) {
	for _, rate := range []float64{-0.1, 1, 2} {
		err := DurableOptions{FalsePositiveRate: rate}.Validate()
		if err == nil || !strings.Contains(err.Error(), "FalsePositiveRate") {
			t.Errorf("Validate(FalsePositiveRate %v) = %v, want an error naming it", rate, err)
		}
	}
	if err := (DurableOptions{MaxFilterBytes: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "MaxFilterBytes") {
		t.Errorf("Validate(MaxFilterBytes -1) = %v, want an error naming it", err)
	}
	if err := (DurableOptions{MaxFilterBytes: 1 << 30, FalsePositiveRate: 0.001}).Validate(); err != nil {
		t.Errorf("Validate(good options) = %v", err)
	}
}

// inFilter reports whether u's store key may be in d's filter.
func inFilter(t *testing.T, d *Durable, u string) bool {
	t.Helper()
	host, err := hostOf(u)
	if err != nil {
		t.Fatal(err)
	}
	return d.filter.test(d.filter.hash(store.SeenKey(0, host, u)))
}

// TestMaybeSeen: the filter's answer for URLs added, new and malformed.
func TestMaybeSeen(t *testing.T) {
	db := openStore(t, vfs.NewMem(), "/s")
	defer db.Close()
	d := newDurable(t, db, DurableOptions{})
	if _, err := d.AddTo(db.NewBatch(), 3, "http://a.test/x"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		job  uint32
		url  string
		want bool
	}{
		{3, "http://a.test/x", true},  // staged: in the filter before its batch commits
		{4, "http://a.test/x", false}, // another job's key
		{3, "http://a.test/y", false}, // new (a false positive at 1 in 10^7 URLs: not here)
		{3, "not a url", false},
	}
	for _, c := range cases {
		if got := d.MaybeSeen(c.job, c.url); got != c.want {
			t.Errorf("MaybeSeen(%d, %q) = %v, want %v", c.job, c.url, got, c.want)
		}
	}
}

// TestDurableOutgrowsExpected: a gate that takes 20 times the URLs it was
// sized for still answers "certainly new" for all but about 2% of new URLs
// (each "maybe" costs a store read), where a filter of fixed size would
// answer "maybe" for nearly all of them; after a restart the filter is one
// layer again, sized from the store.
func TestDurableOutgrowsExpected(t *testing.T) {
	fs := vfs.NewMem()
	db := openStore(t, fs, "/s")
	const expected, n = 1000, 20_000
	d := newDurable(t, db, DurableOptions{ExpectedURLs: expected})
	for start := 0; start < n; start += 500 {
		urls := make([]string, 500)
		for i := range urls {
			urls[i] = fmt.Sprintf("http://h%d.test/in/%d", (start+i)%53, start+i)
		}
		b := db.NewBatch()
		got, err := d.AddBatch(b, 0, urls)
		if err != nil {
			t.Fatal(err)
		}
		for i, isNew := range got {
			if !isNew {
				t.Fatalf("new URL %s reported seen", urls[i])
			}
		}
		if err := db.CommitNoSync(b); err != nil {
			t.Fatal(err)
		}
	}
	maybeRate := func(d *Durable) float64 {
		maybe := 0
		for i := range n {
			if d.MaybeSeen(0, fmt.Sprintf("http://h%d.test/out/%d", i%53, i)) {
				maybe++
			}
		}
		return float64(maybe) / n
	}
	if rate := maybeRate(d); rate > 0.025 || d.FilterStats().Layers < 5 {
		t.Errorf("after %d URLs in a gate sized for %d: %d layers, %.4f of new URLs answered maybe; want at least 5 layers and below 0.025", n, expected, d.FilterStats().Layers, rate)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openStore(t, fs, "/s")
	defer db.Close()
	d = newDurable(t, db, DurableOptions{ExpectedURLs: expected})
	if rate := maybeRate(d); rate > 0.015 || d.FilterStats().Layers != 1 || d.Len() != n {
		t.Errorf("after a restart: %d layers, %d URLs, %.4f of new URLs answered maybe; want 1 layer, %d URLs, below 0.015", d.FilterStats().Layers, d.Len(), rate, n)
	}
}

// TestDurableLoadsEveryPartition: start-up reads the partitions' key
// ranges side by side; whatever the split (GOMAXPROCS), every partition's
// keys reach the filter, the first and the last included.
func TestDurableLoadsEveryPartition(t *testing.T) {
	fs := vfs.NewMem()
	db := openStore(t, fs, "/s")
	var urls []string
	for _, p := range []partition.ID{0, 1, 63, 64, 85, 86, 127, 128, 170, 171, 254, 255} {
		for i := 0; ; i++ {
			if host := fmt.Sprintf("h%d.test", i); partition.Of(host) == p {
				urls = append(urls, "http://"+host+"/", "http://"+host+"/x")
				break
			}
		}
	}
	d := newDurable(t, db, DurableOptions{ExpectedURLs: 100})
	b := db.NewBatch()
	if _, err := d.AddBatch(b, 0, urls); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 7, 300} {
		runtime.GOMAXPROCS(procs)
		d := newDurable(t, db, DurableOptions{ExpectedURLs: 100})
		if d.Len() != len(urls) {
			t.Errorf("GOMAXPROCS %d: Len() = %d after loading, want %d", procs, d.Len(), len(urls))
		}
		for _, u := range urls {
			if !inFilter(t, d, u) {
				t.Errorf("GOMAXPROCS %d: %s not loaded into the filter", procs, u)
			}
		}
	}
	db.Close()
}
