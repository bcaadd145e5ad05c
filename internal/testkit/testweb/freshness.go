package testweb

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/recrawl"
)

// FreshnessReport is what a crawler's fetches of a changing web kept
// fresh, judged by the web's ground truth (Server.Freshness).
type FreshnessReport struct {
	// Pages is the number of versioned pages judged: those the crawler
	// got an answer for at least once.
	Pages int
	// Freshness is the mean, over the samples, of the share of judged
	// pages whose copy (the version the last answered fetch before the
	// sample got) was the live version.
	Freshness float64
	// MeanAge is the mean, over samples and pages, of the time since the
	// live page first differed from the copy (0 while fresh).
	MeanAge time.Duration
	// Fetches counts the answered fetches (200 or 304) of judged pages
	// in the window, NotModified the 304s among them; BytesSaved is the
	// body bytes the 304s did not send (each page's mean 200 body).
	Fetches, NotModified int
	BytesSaved           int64
	// Window is the judged time, and Rates the true change rates (per
	// hour; 0 for a page that never changes) of the judged pages, for the
	// schedules a test compares against at the same budget.
	Window time.Duration
	Rates  []float64
	// PageFetches holds each judged page's answered fetches in the
	// window, in the order of Rates.
	PageFetches []int
}

// Budget is the fetches per hour the crawler spent on the judged pages in
// the window.
func (r FreshnessReport) Budget() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.Fetches) / r.Window.Hours()
}

func (r FreshnessReport) String() string {
	return fmt.Sprintf("%d pages, freshness %.3f, mean age %v, %d fetches in %v (%.0f/h; %d of them 304, %d bytes saved)",
		r.Pages, r.Freshness, r.MeanAge.Round(time.Millisecond), r.Fetches, r.Window, r.Budget(), r.NotModified, r.BytesSaved)
}

// Freshness judges the crawl in the server's log over [from, to), sampled
// every step (real times, as the log's): at each sample, each judged page
// is fresh if the version its last answered fetch got is the page's
// version then. webTime maps a real time to the web's (the change clock's;
// nil: the same). A 200 got the version current at its request; a 304
// left the crawler's copy as it was (the version of the fetch before,
// stale if the host's ETag lied).
func (s *Server) Freshness(from, to time.Time, step time.Duration, webTime func(time.Time) time.Time) FreshnessReport {
	if webTime == nil {
		webTime = func(t time.Time) time.Time { return t }
	}
	type fetch struct {
		at      time.Time
		version int
	}
	fetches := map[string][]fetch{}
	sizes := map[string][2]int64{} // page → summed 200 bytes, count
	var rep FreshnessReport
	port := s.Port()
	for _, r := range s.Log() {
		if r.Status != http.StatusOK && r.Status != http.StatusNotModified {
			continue
		}
		u := fmt.Sprintf("http://%s:%d%s", r.Host, port, r.Path)
		if !s.web.Versioned(u) {
			continue
		}
		v := s.web.Version(u, webTime(r.Start))
		if fs := fetches[u]; r.Status == http.StatusNotModified && len(fs) > 0 {
			v = fs[len(fs)-1].version
		}
		fetches[u] = append(fetches[u], fetch{r.Start, v})
		if r.Status == http.StatusOK {
			sz := sizes[u]
			sizes[u] = [2]int64{sz[0] + r.Bytes, sz[1] + 1}
		}
		if !r.Start.Before(from) && r.Start.Before(to) {
			rep.Fetches++
			if r.Status == http.StatusNotModified {
				rep.NotModified++
				if sz := sizes[u]; sz[1] > 0 {
					rep.BytesSaved += sz[0] / sz[1]
				}
			}
		}
	}
	pages := make([]string, 0, len(fetches))
	for u := range fetches {
		pages = append(pages, u)
	}
	slices.Sort(pages)
	rep.Pages, rep.Window = len(pages), to.Sub(from)
	for _, u := range pages {
		every, _ := s.web.ChangeEvery(u)
		r := 0.0
		if every > 0 {
			r = 1 / every.Hours()
		}
		rep.Rates = append(rep.Rates, r)
		n := 0
		for _, f := range fetches[u] {
			if !f.at.Before(from) && f.at.Before(to) {
				n++
			}
		}
		rep.PageFetches = append(rep.PageFetches, n)
	}
	if len(pages) == 0 || step <= 0 {
		return rep
	}
	var freshSum float64
	var ageSum time.Duration
	samples := 0
	for t := from; t.Before(to); t = t.Add(step) {
		fresh := 0
		wt := webTime(t)
		for _, u := range pages {
			fs := fetches[u]
			i := sort.Search(len(fs), func(i int) bool { return fs[i].at.After(t) }) - 1
			if i < 0 {
				ageSum += wt.Sub(s.web.epoch()) // never fetched yet: stale since the start
				continue
			}
			if v := s.web.Version(u, wt); v == fs[i].version {
				fresh++
			} else {
				ageSum += wt.Sub(s.web.changeTime(u, fs[i].version+1))
			}
		}
		freshSum += float64(fresh) / float64(len(pages))
		samples++
	}
	rep.Freshness = freshSum / float64(samples)
	rep.MeanAge = ageSum / time.Duration(samples*len(pages))
	return rep
}

// changeTime returns the time of the page's v-th change (v >= 1); the
// epoch if it has none.
func (w *Web) changeTime(rawURL string, v int) time.Time {
	at, n := w.epoch(), 0
	w.changeOf(rawURL).changeTimes(w.epoch(), func(t time.Time) bool {
		n++
		if n == v {
			at = t
			return false
		}
		return true
	})
	return at
}

// Judgement is a FreshnessReport set against the schedules its freshness
// is judged between, at the budget the crawler spent in the window:
// uniform recrawl and the optimum for the true rates (recrawl.Policy's
// Reference, within the policy's bounds).
type Judgement struct {
	Uniform, Optimum float64
	// GapShare is (Freshness - Uniform) / (Optimum - Uniform).
	GapShare float64
	// UniformEvery is uniform recrawl's interval at that budget.
	UniformEvery time.Duration
	// Classes splits the judged pages by true change interval against
	// the policy's bounds: never; faster than MinInterval; MinInterval
	// to the geometric mean of the bounds; from there to MaxInterval;
	// slower than MaxInterval.
	Classes []ClassJudgement
}

// ClassJudgement is one class of pages of a Judgement: the crawler's
// fetches of them in the window and the optimum's (at the same budget).
type ClassJudgement struct {
	Name           string
	Pages, Fetches int
	OptimumFetches float64
}

// Judge sets r against uniform recrawl and the optimum under pol's
// bounds, at the budget r spent.
func (r FreshnessReport) Judge(pol *recrawl.Policy) Judgement {
	budget := recrawl.Rate(r.Budget())
	var j Judgement
	if budget <= 0 || len(r.Rates) == 0 {
		return j
	}
	j.Uniform, j.Optimum = pol.Reference(r.Rates, budget)
	j.GapShare = recrawl.GapShare(r.Freshness, j.Uniform, j.Optimum)
	j.UniformEvery = time.Duration(float64(len(r.Rates)) / float64(budget) * float64(time.Hour))
	d := make([]recrawl.Demand, len(r.Rates))
	for i, rate := range r.Rates {
		d[i].Estimate = recrawl.Estimate{Rate: recrawl.Rate(rate), Intervals: 1}
	}
	opt := pol.Solve(d, budget)
	o := pol.Options()
	mid := time.Duration(math.Sqrt(o.MinInterval.Seconds()*o.MaxInterval.Seconds()) * float64(time.Second))
	short := shortDuration
	j.Classes = []ClassJudgement{{Name: "never"}, {Name: "< " + short(o.MinInterval)},
		{Name: short(o.MinInterval) + "-" + short(mid)}, {Name: short(mid) + "-" + short(o.MaxInterval)}, {Name: "> " + short(o.MaxInterval)}}
	for i, rate := range r.Rates {
		k := 0
		if rate > 0 {
			switch every := time.Duration(float64(time.Hour) / rate); {
			case every < o.MinInterval:
				k = 1
			case every < mid:
				k = 2
			case every < o.MaxInterval:
				k = 3
			default:
				k = 4
			}
		}
		c := &j.Classes[k]
		c.Pages++
		c.Fetches += r.PageFetches[i]
		c.OptimumFetches += r.Window.Seconds() / opt.Intervals[i].Seconds()
	}
	return j
}

// String is one line per class: pages, fetches a page, and the optimum's.
func (j Judgement) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "uniform every %v: %.3f; optimum %.3f; gap share %.2f", j.UniformEvery.Round(time.Millisecond), j.Uniform, j.Optimum, j.GapShare)
	for _, c := range j.Classes {
		if c.Pages > 0 {
			fmt.Fprintf(&b, "\n%-9s %4d pages, %.1f fetches a page (optimum %.1f)", c.Name, c.Pages, float64(c.Fetches)/float64(c.Pages), c.OptimumFetches/float64(c.Pages))
		}
	}
	return b.String()
}

// shortDuration is d to the second without zero units: 20s, 1m, 1m3s, 1h.
func shortDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	for _, z := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, z) {
			s = s[:len(s)-2]
		}
	}
	return s
}

// PerSecond returns the most answered page fetches (robots.txt aside)
// that began in one whole second of [from, to), and the mean per second.
func PerSecond(log []Request, from, to time.Time) (peak int, mean float64) {
	secs := int(to.Sub(from) / time.Second)
	if secs <= 0 {
		return 0, 0
	}
	counts := make([]int, secs)
	total := 0
	for _, r := range log {
		if r.Status == 0 || strings.HasSuffix(r.Path, "/robots.txt") || r.Start.Before(from) {
			continue
		}
		if i := int(r.Start.Sub(from) / time.Second); i < secs {
			counts[i]++
			total++
		}
	}
	return slices.Max(counts), float64(total) / float64(secs)
}
