package scope

import (
	"net/url"
	"strings"
	"testing"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestShape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://a.test/calendar/2025/06", "a.test/calendar/#/#"},
		{"http://a.test/calendar/2031/11", "a.test/calendar/#/#"},
		{"http://a.test/list?page=12&sort=a1", "a.test/list?page=#&sort=a#"},
		{"http://h017.test:8080/", "h#.test:#/"},
		{"http://a.test/about", "a.test/about"},
	}
	for _, tt := range tests {
		if got := Shape(mustURL(t, tt.in)); got != tt.want {
			t.Errorf("Shape(%q) = %q, want %q", tt.in, got, tt.want)
		}
		for _, other := range tests {
			a, b := mustURL(t, tt.in), mustURL(t, other.in)
			if got, want := SameShape(a, b), tt.want == other.want; got != want {
				t.Errorf("SameShape(%q, %q) = %v, want %v", tt.in, other.in, got, want)
			}
		}
	}
	long := mustURL(t, "http://a.test/"+strings.Repeat("x1", 300)) // past SameShape's stack buffers
	if !SameShape(long, mustURL(t, "http://a.test/"+strings.Repeat("x9", 300))) {
		t.Error("SameShape of two long URLs of one shape is false")
	}
	a, b := mustURL(t, tests[0].in), mustURL(t, tests[1].in)
	if n := testing.AllocsPerRun(100, func() { SameShape(a, b) }); n != 0 {
		t.Errorf("SameShape allocates: %v allocations", n)
	}
}

func TestShapeRun(t *testing.T) {
	cal := func(m string) *url.URL { return mustURL(t, "http://a.test/calendar/2025/"+m) }
	tests := []struct {
		name    string
		from    *url.URL
		fromRun int
		yielded bool
		to      *url.URL
		want    int
	}{
		{"seed", nil, 0, false, cal("01"), 0},
		{"run starts", cal("01"), 0, false, cal("02"), 1},
		{"barren page: the run grows", cal("02"), 3, false, cal("03"), 4},
		{"page yielded: the count starts again", cal("02"), 3, true, cal("03"), 1},
		{"first page yielded", cal("01"), 0, true, cal("02"), 1},
		{"other shape resets", cal("02"), 3, false, mustURL(t, "http://a.test/about"), 0},
		{"other host resets", cal("02"), 3, false, mustURL(t, "http://b.test/calendar/2025/03"), 0},
	}
	for _, tt := range tests {
		if got := ShapeRun(tt.from, tt.fromRun, tt.to, tt.yielded); got != tt.want {
			t.Errorf("%s: ShapeRun = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestCheckShapeRun(t *testing.T) {
	u := mustURL(t, "http://a.test/calendar/2025/06")
	tests := []struct {
		max, run int
		reject   bool
	}{
		{0, 0, false},
		{0, DefaultMaxShapeRun + 1, false}, // DefaultMaxShapeRun barren pages
		{0, DefaultMaxShapeRun + 2, true},
		{5, 6, false},
		{5, 7, true},
		{-1, 1000, false},
	}
	for _, tt := range tests {
		err := Rules{MaxShapeRun: tt.max}.CheckShapeRun(u, tt.run)
		if (err != nil) != tt.reject {
			t.Errorf("MaxShapeRun %d: CheckShapeRun(run %d) = %v, want reject %v", tt.max, tt.run, err, tt.reject)
		}
		if r, ok := err.(*Rejection); err != nil && (!ok || r.Reason != ReasonShapeRun) {
			t.Errorf("CheckShapeRun error = %#v, want a shape-run Rejection", err)
		}
	}
}

// TestShapeRunWalk walks a run of pages through NextShapeRun and
// CheckShapeRun, entered at one page and followed in both directions
// (next and previous), as a crawler reaches them: an endless run whose
// pages yield nothing stops after MaxShapeRun+1 pages each way; a
// finite one whose pages yield is walked whole, however long; one that
// yields for a while and then runs dry (a listing whose "next" links go
// on past its last page) stops MaxShapeRun+1 pages past its last yield.
func TestShapeRunWalk(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rules  Rules
		pages  int              // the run's pages each way from the entry; 0: endless
		yields func(k int) bool // whether the page k steps from the entry yields
		want   int              // pages fetched each way, the entry left out
	}{
		{"calendar", Rules{}, 0, func(int) bool { return false }, DefaultMaxShapeRun + 1},
		{"calendar, cap 1", Rules{MaxShapeRun: 1}, 0, func(int) bool { return false }, 2},
		{"blog listing", Rules{}, 29, func(int) bool { return true }, 29},
		{"listing that runs dry after 12", Rules{}, 0, func(k int) bool { return k <= 12 }, 12 + DefaultMaxShapeRun + 1},
		{"every other page yields", Rules{}, 500, func(k int) bool { return k%2 == 0 }, 500},
		{"no cap, finite", Rules{MaxShapeRun: -1}, 40, func(int) bool { return false }, 40},
	} {
		u := mustURL(t, "http://a.test/blog/page/1/")
		run, fetched := 0, 0 // the entry: a link from another shape
		for k := 1; tc.pages == 0 || k <= tc.pages; k++ {
			run = NextShapeRun(run, k > 1 && tc.yields(k-1))
			if tc.rules.CheckShapeRun(u, run) != nil {
				break
			}
			fetched++
			if fetched > 10000 {
				break
			}
		}
		if fetched != tc.want {
			t.Errorf("%s: %d pages fetched each way, want %d", tc.name, fetched, tc.want)
		}
	}
}
