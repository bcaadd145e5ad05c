package warccheck

import (
	"strings"
	"testing"
)

// TestResolveRevisits: a revisit line resolves through the index to a
// capture of its original's SURT and second with its digest, never to
// another revisit; each way it can fail is reported.
func TestResolveRevisits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: warcio reads every revisit; the full suite runs it")
	}
	orig := `com,a)/x 20240506070809 {"url":"http://a.com/x","mime":"text/html","status":"200","digest":"D1","length":"10","offset":"0","filename":"f.warc.gz"}`
	otherDigest := `com,a)/x 20240506070809 {"url":"http://a.com/x","mime":"text/html","status":"200","digest":"D0","length":"10","offset":"10","filename":"f.warc.gz"}`
	rev := `com,a)/y 20240507000000 {"url":"http://a.com/y","mime":"warc/revisit","status":"200","digest":"D1","length":"10","offset":"20","filename":"f.warc.gz"}`
	revOfRev := `com,a)/z 20240508000000 {"url":"http://a.com/z","mime":"warc/revisit","status":"200","digest":"D1","length":"10","offset":"30","filename":"f.warc.gz"}`
	record := func(offset int64, refersTo, date string) Revisit {
		return Revisit{URI: "http://a.com/r", RefersToURI: refersTo, RefersToDate: date, File: "/data/warc/f.warc.gz", Offset: offset, PayloadDigest: "sha256:D1"}
	}
	recRev := record(20, "http://www.a.com/x", "2024-05-06T07:08:09.123456Z") // warcio's SURT drops www.
	for _, tt := range []struct {
		name    string
		lines   []string
		records []Revisit
		want    []string // a substring of each problem, in order
	}{
		{"resolves", []string{orig, rev}, []Revisit{recRev}, nil},
		{"among captures of the same second", []string{otherDigest, orig, rev}, []Revisit{recRev}, nil},
		{"no original", []string{rev}, []Revisit{recRev}, []string{"no capture keyed \"com,a)/x 20240506070809\""}},
		{"other digest", []string{otherDigest, rev}, []Revisit{recRev}, []string{"with digest D1"}},
		{"wrong date", []string{orig, rev}, []Revisit{record(20, "http://a.com/x", "2024-05-06T07:08:10Z")}, []string{"no capture keyed"}},
		{"to a revisit", []string{rev, revOfRev}, []Revisit{recRev, record(30, "http://a.com/y", "2024-05-07T00:00:00Z")}, []string{"no capture keyed \"com,a)/x", "no capture keyed \"com,a)/y"}},
		{"record without a line", []string{orig}, []Revisit{recRev}, []string{"has no CDXJ line"}},
		{"line without a record", []string{orig, rev}, nil, []string{"warcio read no revisit record"}},
		{"not sorted", []string{rev, orig}, []Revisit{recRev}, []string{"not sorted", "no capture keyed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveRevisits(tt.lines, &Report{Revisits: tt.records})
			if err != nil {
				t.Fatal(err)
			}
			ok := len(got) == len(tt.want)
			for i := range min(len(got), len(tt.want)) {
				ok = ok && strings.Contains(got[i], tt.want[i])
			}
			if !ok {
				t.Errorf("ResolveRevisits = %q, want problems containing %q", got, tt.want)
			}
		})
	}
	if _, err := ResolveRevisits([]string{"no json"}, &Report{}); err == nil {
		t.Error("ResolveRevisits of a line without JSON: no error")
	}
}
