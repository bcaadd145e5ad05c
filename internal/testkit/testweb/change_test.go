package testweb

import (
	"io"
	"math"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"
)

// TestChangingKeepsTheWeb: Changing adds change rates and validators, and
// nothing else: the pages, links and hosts are those of the same web
// without it, and a page's content at the epoch is the same.
func TestChangingKeepsTheWeb(t *testing.T) {
	o := Options{Seed: 5, Hosts: 30, Hostile: true, Traps: true, Lookalikes: true}
	plain := Generate(o)
	o.Changing = true
	changing := Generate(o)
	if !reflect.DeepEqual(plain.Pages(), changing.Pages()) {
		t.Error("Pages differ with Changing")
	}
	ph, ch := plain.Hosts(), changing.Hosts()
	for i := range ch {
		ch[i].Validators = ""
	}
	if !reflect.DeepEqual(ph, ch) {
		t.Error("Hosts differ with Changing (beyond Validators)")
	}
	for i, h := range changing.hosts {
		for j, r := range h.res {
			if r.change != nil && string(changing.renderPage(r, "")) != string(plain.renderPage(plain.hosts[i].res[j], "")) {
				t.Fatalf("%s: content at version 0 differs", r.url(changing))
			}
		}
	}
}

// TestChangeRates: over 90 days, each class of pages changes at its mean
// rate (within 15%, a generous bound for the counts involved, on a fixed
// seed), the classes and host kinds come in their stated shares (within 6
// points), and a web that is not changing never changes.
func TestChangeRates(t *testing.T) {
	w := Generate(Options{Seed: 11, Hosts: 300, Changing: true})
	from := defaultChangeEpoch
	to := from.Add(90 * 24 * time.Hour)
	type tally struct {
		pages, changes int
		every          time.Duration
	}
	byClass := map[string]*tally{}
	total := 0
	for _, h := range w.hosts {
		for _, r := range h.res {
			if r.change == nil {
				continue
			}
			total++
			every, name := w.ChangeEvery(r.url(w))
			c := byClass[name]
			if c == nil {
				c = &tally{every: every}
				byClass[name] = c
			}
			c.pages++
			c.changes += w.Changes(r.url(w), from, to)
		}
	}
	for _, cl := range changeClasses {
		c := byClass[cl.name]
		if c == nil {
			t.Errorf("no %s pages", cl.name)
			continue
		}
		share := 100 * float64(c.pages) / float64(total)
		if math.Abs(share-float64(cl.share)) > 6 {
			t.Errorf("%s: %.1f%% of %d pages, want %d%%", cl.name, share, total, cl.share)
		}
		if cl.every == 0 {
			if c.changes != 0 {
				t.Errorf("never: %d changes", c.changes)
			}
			continue
		}
		want := float64(c.pages) * float64(to.Sub(from)) / float64(cl.every)
		if got := float64(c.changes); math.Abs(got-want) > 0.15*want {
			t.Errorf("%s: %d pages changed %.0f times in 90 days, want about %.0f", cl.name, c.pages, got, want)
		}
		t.Logf("%s: %d pages (%.1f%%), %d changes in 90 days (expected %.0f)", cl.name, c.pages, share, c.changes, want)
	}
	kinds := map[string]int{}
	hosts := 0
	for _, h := range w.Hosts() {
		if h.Validators != "" {
			kinds[h.Validators]++
			hosts++
		}
	}
	for _, k := range validatorKinds {
		if share := 100 * float64(kinds[k.kind]) / float64(hosts); math.Abs(share-float64(k.share)) > 6 {
			t.Errorf("validators %s: %.1f%% of %d hosts, want %d%%", k.kind, share, hosts, k.share)
		}
	}

	plain := Generate(Options{Seed: 11, Hosts: 300})
	for _, p := range plain.Pages()[:50] {
		if n := plain.Changes(p.URL, from, to); n != 0 {
			t.Errorf("%s changed %d times in a web that is not changing", p.URL, n)
		}
	}
}

// manualClock is a clock a test sets.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// TestServeChanging: per host kind, what the server sends before and after
// a page changes, to a request with the validators it sent before.
func TestServeChanging(t *testing.T) {
	w := Generate(Options{Seed: 3, Hosts: 200, Changing: true, Latency: -1})
	clock := &manualClock{t: defaultChangeEpoch.Add(time.Hour)}
	srv, err := Serve(w, ServeOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := client(t, srv)

	fetch := func(u, etag, lastModified string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest("GET", u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		if lastModified != "" {
			req.Header.Set("If-Modified-Since", lastModified)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header, string(b)
	}

	for _, tc := range []struct {
		kind string
		// the answers to a conditional request before and after a change
		before, after int
		// whether each response sends an ETag, a Last-Modified
		etag, lastModified bool
	}{
		{ValidatorsHonest, 304, 200, true, true},
		{ValidatorsOmitted, 200, 200, false, false},
		{ValidatorsLyingLM, 200, 200, false, true},
		{ValidatorsChurnETag, 200, 200, true, false},
		{ValidatorsStuckETag, 304, 304, true, false},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			// A daily page of a host of this kind.
			var u string
			for _, h := range w.hosts {
				for _, r := range h.regular {
					if h.validators == tc.kind && r.change != nil && r.change.class.name == "daily" && u == "" {
						u = r.url(w)
					}
				}
			}
			if u == "" {
				t.Fatalf("no daily page on a %s host", tc.kind)
			}
			start := defaultChangeEpoch.Add(time.Hour)
			for w.Version(u, start) != w.Version(u, start.Add(time.Hour)) {
				start = start.Add(time.Hour) // not just before a change
			}
			clock.Set(start)
			status, h1, body1 := fetch(u, "", "")
			etag, lm := h1.Get("ETag"), h1.Get("Last-Modified")
			if status != 200 || (etag != "") != tc.etag || (lm != "") != tc.lastModified {
				t.Fatalf("first fetch: %d, ETag %q, Last-Modified %q", status, etag, lm)
			}
			if tc.kind == ValidatorsLyingLM && lm != start.UTC().Format(http.TimeFormat) {
				t.Errorf("Last-Modified %q, want now %q", lm, start.UTC().Format(http.TimeFormat))
			}
			if tc.kind == ValidatorsHonest {
				_, last := w.resourceOf(t, u).change.version(defaultChangeEpoch, start)
				if lm != last.UTC().Format(http.TimeFormat) {
					t.Errorf("Last-Modified %q, want the last change %v", lm, last)
				}
			}
			clock.Set(start.Add(time.Minute))
			status, h2, _ := fetch(u, etag, lm)
			if status != tc.before {
				t.Errorf("unchanged: conditional fetch %d, want %d", status, tc.before)
			}
			if tc.kind == ValidatorsChurnETag && h2.Get("ETag") == etag {
				t.Errorf("ETag %q twice", etag)
			}
			// Past the next change.
			next := start
			for w.Version(u, next) == w.Version(u, start) {
				next = next.Add(time.Hour)
			}
			clock.Set(next)
			status, h3, _ := fetch(u, etag, lm)
			if status != tc.after {
				t.Errorf("changed: conditional fetch %d, want %d", status, tc.after)
			}
			if tc.kind == ValidatorsStuckETag && h3.Get("ETag") != etag {
				t.Errorf("constant ETag changed: %q then %q", etag, h3.Get("ETag"))
			}
			if _, _, body3 := fetch(u, "", ""); body3 == body1 {
				t.Error("content did not change with the version")
			}
			if tc.kind == ValidatorsHonest {
				if status, _, _ := fetch(u, "", lm); status != 200 {
					t.Errorf("If-Modified-Since before the change: %d, want 200", status)
				}
			}
		})
	}
}

// resourceOf returns the resource of u (test helper).
func (w *Web) resourceOf(t *testing.T, u string) *resource {
	t.Helper()
	_, r, _, err := w.lookup(u)
	if err != nil || r == nil {
		t.Fatalf("lookup %s: %v", u, err)
	}
	return r
}
