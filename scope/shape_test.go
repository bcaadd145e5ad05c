package scope

import (
	"net/url"
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
	}
}

func TestShapeRun(t *testing.T) {
	cal := func(m string) *url.URL { return mustURL(t, "http://a.test/calendar/2025/"+m) }
	tests := []struct {
		name    string
		from    *url.URL
		fromRun int
		to      *url.URL
		want    int
	}{
		{"seed", nil, 0, cal("01"), 0},
		{"same shape", cal("01"), 0, cal("02"), 1},
		{"run grows", cal("02"), 3, cal("03"), 4},
		{"other shape resets", cal("02"), 3, mustURL(t, "http://a.test/about"), 0},
		{"other host resets", cal("02"), 3, mustURL(t, "http://b.test/calendar/2025/03"), 0},
	}
	for _, tt := range tests {
		if got := ShapeRun(tt.from, tt.fromRun, tt.to); got != tt.want {
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
		{0, DefaultMaxShapeRun, false},
		{0, DefaultMaxShapeRun + 1, true},
		{5, 5, false},
		{5, 6, true},
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
