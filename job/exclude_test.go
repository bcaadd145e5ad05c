package job

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestExclusions(t *testing.T) {
	x, err := CompileExclusions([]string{`^https?://ads\.`, `/calendar/\d{4}/`, `\?sessionid=`, `/calendar/\d{4}/`})
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Patterns(); len(got) != 3 {
		t.Errorf("Patterns = %q: the duplicate should be dropped", got)
	}
	for url, want := range map[string]bool{
		"http://ads.example.com/x":           true,
		"http://example.com/ads.html":        false,
		"http://a.test/calendar/2026/01":     true,
		"http://a.test/calendar/":            false,
		"http://a.test/p?sessionid=42":       true,
		"http://a.test/p?session=42":         false,
		"http://a.test/calendar/2026/01?a=b": true,
	} {
		if got := x.Excludes(url); got != want {
			t.Errorf("Excludes(%q) = %v, want %v", url, got, want)
		}
	}
	var none *Exclusions
	if none.Excludes("http://a.test/") || (&Exclusions{}).Excludes("http://a.test/") {
		t.Error("an empty set excluded a URL")
	}
}

func TestExclusionsRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		patterns []string
		index    string
	}{
		"empty":     {[]string{`a`, ``}, "Exclude[1]"},
		"bad regex": {[]string{`(unclosed`}, "Exclude[0]"},
		"too long":  {[]string{strings.Repeat("a", MaxExclusionPattern+1)}, "Exclude[0]"},
		"too many":  {slices.Repeat([]string{"a"}, MaxExclusions+1), "patterns: want at most"},
	} {
		_, err := CompileExclusions(tc.patterns)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "Exclude" || !strings.Contains(err.Error(), tc.index) {
			t.Errorf("%s: err = %v, want a FieldError naming %s", name, err, tc.index)
		}
	}
}

func TestExclusionsEdit(t *testing.T) {
	x, _ := CompileExclusions([]string{"a", "b"})
	y, err := x.Edit([]string{"c", "a"}, []string{"b"})
	if err != nil || !slices.Equal(y.Patterns(), []string{"a", "c"}) {
		t.Fatalf("Edit = %q, %v; want [a c]", y.Patterns(), err)
	}
	if !slices.Equal(x.Patterns(), []string{"a", "b"}) {
		t.Errorf("Edit changed the set it was called on: %q", x.Patterns())
	}
	for _, tc := range []struct {
		add, remove []string
		field, want string
	}{
		{nil, []string{"zz"}, "Remove", "Remove[0]"},
		{[]string{"ok", "("}, nil, "Add", "Add[1]"},
	} {
		_, err := x.Edit(tc.add, tc.remove)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Edit(%q, %q) err = %v, want a FieldError naming %s", tc.add, tc.remove, err, tc.want)
		}
	}
}

// TestExclusionsStored: a job's patterns are part of its record, and a
// changed set survives a round trip through it.
func TestExclusionsStored(t *testing.T) {
	j, err := New(1, Spec{Seeds: []string{"http://a.test/"}, Exclude: []string{"x"}}, time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	x, _ := j.Exclusions().Edit([]string{"y"}, []string{"x"})
	j.SetExclusions(x)
	r, err := DecodeRecord(j.Record().Encode())
	if err != nil {
		t.Fatal(err)
	}
	back, err := Restore(r)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Excludes("http://a.test/y") || back.Excludes("http://a.test/x") {
		t.Errorf("restored exclusions %q", back.Exclusions().Patterns())
	}
	if err := (Spec{Seeds: []string{"http://a.test/"}, Exclude: []string{"("}}).Validate(); err == nil {
		t.Error("Validate accepted a bad pattern")
	}
}
