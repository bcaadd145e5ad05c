package testweb

import (
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestChangeRange: a ChangeRange web's pages never change (Never percent)
// or change at a mean interval within the range, log-uniform; bad ranges
// are refused by name.
func TestChangeRange(t *testing.T) {
	cr := ChangeRange{Min: time.Hour, Max: 100 * time.Hour, Never: 30}
	w := Generate(Options{Seed: 5, Hosts: 300, Changing: true, ChangeRange: cr})
	var never, n int
	var logs []float64
	for _, p := range w.Pages() {
		if !w.Versioned(p.URL) {
			continue
		}
		n++
		every, name := w.ChangeEvery(p.URL)
		switch {
		case every == 0 && name == "never":
			never++
		case every >= cr.Min && every <= cr.Max && name == "range":
			logs = append(logs, math.Log(float64(every/cr.Min))/math.Log(100))
		default:
			t.Fatalf("%s: every %v (%s), want never or within %v..%v", p.URL, every, name, cr.Min, cr.Max)
		}
	}
	if share := 100 * float64(never) / float64(n); math.Abs(share-30) > 6 {
		t.Errorf("%.1f%% of %d pages never change, want 30%%", share, n)
	}
	slices.Sort(logs) // log-uniform: the position in the log range is uniform
	for _, q := range []float64{0.25, 0.5, 0.75} {
		if got := logs[int(q*float64(len(logs)))]; math.Abs(got-q) > 0.06 {
			t.Errorf("quantile %.2f of log(every) at %.3f of the range, want about %.2f", q, got, q)
		}
	}

	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{ChangeRange: cr}, "without Changing"},
		{Options{Changing: true, ChangeRange: ChangeRange{Min: time.Hour, Max: time.Minute}}, "want 0 < Min <= Max"},
		{Options{Changing: true, ChangeRange: ChangeRange{Max: time.Minute}}, "want 0 < Min <= Max"},
		{Options{Changing: true, ChangeRange: ChangeRange{Min: time.Second, Max: time.Minute, Never: 101}}, "Never 101%"},
	} {
		if err := tc.o.Validate(); err == nil || !strings.Contains(err.Error(), "ChangeRange") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: Validate = %v, want a ChangeRange error saying %q", tc.o.ChangeRange, err, tc.want)
		}
	}
	for _, o := range []Options{{Validators: ValidatorsStuckETag}, {Changing: true, Validators: "sometimes"}} {
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "Validators") {
			t.Errorf("Validators %q (changing %v): Validate = %v, want a Validators error", o.Validators, o.Changing, err)
		}
	}
	w = Generate(Options{Seed: 7, Hosts: 12, Changing: true, Latency: -1, Validators: ValidatorsStuckETag})
	for _, h := range w.Hosts() {
		if h.Hostile == "" && h.Validators != ValidatorsStuckETag {
			t.Errorf("host %s: validators %q, want every ordinary host %q", h.Name, h.Validators, ValidatorsStuckETag)
		}
	}
}

// TestFreshness judges a crawl made by hand on a clock the test sets:
// every page fetched at t1 is fresh just after; a day later exactly the
// pages that did not change in between are, as the ground truth says;
// 304s leave the copy as it was and count their bytes as saved.
func TestFreshness(t *testing.T) {
	w := Generate(Options{Seed: 7, Hosts: 30, Changing: true, Latency: -1,
		ChangeRange: ChangeRange{Min: time.Hour, Max: 48 * time.Hour, Never: 30}})
	clock := &manualClock{t: defaultChangeEpoch.Add(24 * time.Hour)}
	srv, err := Serve(w, ServeOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := client(t, srv)
	type copyOf struct{ etag, lm string }
	get := func(u string, cp copyOf) (int, copyOf) {
		req, _ := http.NewRequest("GET", u, nil)
		if cp.etag != "" {
			req.Header.Set("If-None-Match", cp.etag)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode == http.StatusNotModified {
			return resp.StatusCode, cp
		}
		return resp.StatusCode, copyOf{resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")}
	}
	// settle waits until every request in the log is recorded whole: a
	// handler logs its status just after the client has read the body.
	settle := func() {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if !slices.ContainsFunc(srv.Log(), func(r Request) bool { return r.Status == 0 }) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("a request's status not logged after 10 s")
			}
		}
	}
	var pages []string
	for _, p := range w.Pages() {
		if w.Versioned(p.URL) {
			pages = append(pages, p.URL)
		}
	}
	t1 := clock.Now()
	copies := map[string]copyOf{}
	for _, u := range pages {
		_, copies[u] = get(u, copyOf{})
	}
	settle()
	rep := srv.Freshness(t1, t1.Add(time.Minute), time.Minute, nil)
	if rep.Pages != len(pages) || rep.Freshness != 1 || rep.MeanAge != 0 || rep.Fetches != len(pages) {
		t.Fatalf("just after fetching all %d pages: %s, want all judged, all fresh, age 0, %d fetches", len(pages), rep, len(pages))
	}

	t2 := t1.Add(24 * time.Hour)
	clock.Set(t2)
	unchanged := 0
	for _, u := range pages {
		if w.Changes(u, t1, t2) == 0 {
			unchanged++
		}
	}
	rep = srv.Freshness(t2, t2.Add(time.Minute), time.Minute, nil)
	if want := float64(unchanged) / float64(len(pages)); math.Abs(rep.Freshness-want) > 1e-9 || rep.MeanAge <= 0 {
		t.Errorf("a day later: %s, want freshness %.3f (%d of %d unchanged) and a positive age", rep, want, unchanged, len(pages))
	}

	// Refetch with the validators: 304s for the unchanged pages of honest
	// hosts, then everything whose answer was a 200 or an honest 304 is
	// fresh.
	var n304 int
	for _, u := range pages {
		if st, _ := get(u, copies[u]); st == http.StatusNotModified {
			n304++
		}
	}
	settle()
	rep = srv.Freshness(t2, t2.Add(time.Minute), time.Minute, nil)
	if rep.NotModified != n304 || n304 == 0 || rep.BytesSaved <= 0 || rep.Fetches != len(pages) {
		t.Errorf("after refetching: %s; want %d 304s with their bytes saved and %d fetches", rep, n304, len(pages))
	}
	if rep.Freshness < 0.9 {
		t.Errorf("after refetching every page: freshness %.3f, want all but the lying-ETag hosts' changed pages", rep.Freshness)
	}
}
