package urlstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/recrawl"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)

func digest(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// pageLinks are links of one page: some alike, one empty-pathed, one on
// another host, one sharing nothing with the link before.
var pageLinks = []string{
	"http://a.test/docs/intro.html", "http://a.test/docs/install.html", "http://a.test/docs/install.html#x",
	"http://a.test", "https://b.test/é?q=1", "http://a.test/docs/intro", "mailto-like:but-kept",
}

// withLeads is r with leads kept.
func withLeads(r Record, leads ...string) Record {
	r.HasLeads = true
	if len(leads) > 0 {
		r.Leads = leads
	}
	return r
}

// full is a record with every field set.
func full() Record {
	r := Record{}
	for i := range 10 {
		r = r.Observe(Observation{
			At: t0.Add(time.Duration(i) * time.Hour), Status: 200,
			ETag: `"v1"`, LastModified: "Mon, 30 Nov 2026 12:00:00 GMT",
			Digest: digest(string(rune('a' + i%3))), HasDigest: true, SimHash: 0xDEADBEEFCAFEF00D,
		})
	}
	return r.Observe(Observation{At: t0.Add(20 * time.Hour), Error: "timeout"})
}

// withRecrawl is full() with a change history and a due recrawl.
func withRecrawl(t testing.TB) Record {
	p, err := recrawl.New(recrawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := full()
	for i := range 5 {
		r.Recrawl = p.Observe(r.Recrawl, recrawl.Visit{At: t0.Add(time.Duration(i) * 3 * time.Hour), Changed: i%2 == 0})
	}
	r.Due, r.DueJob = t0.Add(48*time.Hour).Truncate(time.Second), 7
	return r
}

func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Record
	}{
		{"zero", Record{}},
		{"one fetch", Record{}.Observe(Observation{At: t0, Status: 200, Digest: digest("x"), HasDigest: true})},
		{"error only", Record{}.Observe(Observation{At: t0, Error: "connect"})},
		{"no digest", Record{LastFetch: t0, Status: 404, Fetches: 1}},
		{"before 1970", Record{}.Observe(Observation{At: time.Date(1960, 1, 1, 0, 0, 0, 5, time.UTC), Status: 500})},
		{"full", full()},
		{"big counts", Record{Fetches: 1<<32 - 1, Changes: 1<<32 - 2, Status: 999, SimHash: 1}},
		{"long strings", Record{Error: strings.Repeat("e", MaxErrorLen), ETag: strings.Repeat("t", MaxValidatorLen)}},
		{"recrawl tail", withRecrawl(t)},
		{"due only", Record{LastFetch: t0, Status: 200, Due: time.Unix(1_900_000_000, 0).UTC(), DueJob: 3}},
		{"depth only", Record{LastFetch: t0, Status: 200, Fetches: 1, Depth: 12, HasDepth: true}},
		{"seed depth", Record{LastFetch: t0, Status: 200, Fetches: 1, HasDepth: true}},
		{"recrawl tail and depth", func() Record { r := withRecrawl(t); r.Depth, r.HasDepth = 300, true; return r }()},
		{"links", withLeads(Record{LastFetch: t0, Status: 200, Fetches: 1, HasDepth: true}, pageLinks...)},
		{"no links", withLeads(Record{LastFetch: t0, Status: 200, Fetches: 1})},
		{"redirect", withLeads(Record{LastFetch: t0, Status: 301, Fetches: 1}, "https://a.test/")},
		{"stated before any fetch", Record{Stated: 24 * time.Hour}},
		{"stated, fetched", Record{}.Observe(Observation{At: t0, Status: 200}).withStated(7 * 24 * time.Hour)},
		{"everything", withLeads(withRecrawl(t), pageLinks...).withStated(time.Hour)},
	} {
		v := Encode(c.r)
		got, err := Decode(v)
		if err != nil {
			t.Errorf("%s: Decode(Encode(r)) error %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.r) {
			t.Errorf("%s: Decode(Encode(r)) = %+v, want %+v", c.name, got, c.r)
		}
		if again := Encode(got); !bytes.Equal(again, v) {
			t.Errorf("%s: Encode(Decode(%x)) = %x, want the same bytes", c.name, v, again)
		}
	}
}

func (r Record) withStated(d time.Duration) Record { r.Stated = d; return r }

// TestStated: a stated interval survives the fetches folded into its
// record, costs a few bytes, and a stored one out of range is refused.
func TestStated(t *testing.T) {
	r := Record{Stated: 30 * 24 * time.Hour}
	r = r.Observe(Observation{At: t0, Status: 200, Digest: digest("a"), HasDigest: true})
	r = r.Observe(Observation{At: t0.Add(time.Hour), Error: "timeout"})
	if r.Stated != 30*24*time.Hour {
		t.Errorf("after two fetches: stated %v, want 720h kept", r.Stated)
	}
	if a, b := len(Encode(full())), len(Encode(full().withStated(365*24*time.Hour))); b-a > 1+4 {
		t.Errorf("a stated year costs %d bytes, want at most 5", b-a)
	}
	if a, b := len(Encode(full())), len(Encode(full().withStated(time.Millisecond))); a != b {
		t.Errorf("a stated interval under a second costs %d bytes, want none (not kept)", b-a)
	}
	over := append(Encode(full()), tailStated)
	over = binary.AppendUvarint(over, uint64(maxStated/time.Second)+1)
	if _, err := Decode(over); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "stated interval") {
		t.Errorf("Decode(stated interval past 100 years) error = %v, want ErrMalformed naming it", err)
	}
	if got, err := Decode(Encode(full().withStated(200 * 365 * 24 * time.Hour))); err != nil || got.Stated != maxStated {
		t.Errorf("stated 200 years: %v, %v; want it kept as the bound, %v", got.Stated, err, maxStated)
	}
}

func TestSeenMarker(t *testing.T) {
	r, err := Decode([]byte{0x01})
	if err != nil || !reflect.DeepEqual(r, Record{}) {
		t.Errorf("Decode([0x01]) = %+v, %v; want the zero Record", r, err)
	}
	if v := Encode(Record{}); len(v) < 2 {
		t.Errorf("Encode(Record{}) = %x, want a full record (the 1-byte marker is urlseen's)", v)
	}
}

func TestDecodeMalformed(t *testing.T) {
	for _, c := range []struct {
		name string
		v    []byte
		want string // in the error
	}{
		{"empty", nil, "empty"},
		{"version", []byte{0x02}, "version 2"},
		{"status", append([]byte{1, 0, 0}, 0xE8, 0x07), "status 1000"},
		{"error length", []byte{1, 0, 0, 0, 0x41}, "error length 65"},
		{"changes", append(Encode(Record{Fetches: 1})[:15], 1, 2, 0), "changes 2 > fetches 1"},
		{"history count", append(Encode(Record{})[:15], 0, 0, 9), "history count 9"},
		{"varint overflow", []byte{1, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}, "last fetch"},
	} {
		_, err := Decode(c.v)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Decode(%x) error = %v, want ErrMalformed naming %q", c.name, c.v, err, c.want)
		}
	}
}

// TestDecodeTruncated cuts encoded records at every length: each cut is
// malformed, never a panic and never a partial record.
func TestDecodeTruncated(t *testing.T) {
	for _, r := range []Record{{}, full(), Record{}.Observe(Observation{At: t0, Status: 301}), withRecrawl(t), withLeads(withRecrawl(t), pageLinks...)} {
		v := Encode(r)
		base := r
		base.Recrawl, base.Due, base.DueJob = recrawl.History{}, time.Time{}, 0
		base.Leads, base.HasLeads = nil, false
		for n := 2; n < len(v); n++ {
			if n == len(Encode(base)) {
				continue // the record before its recrawl tail: whole
			}
			got, err := Decode(v[:n])
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("Decode(%x) (cut at %d of %d) = %+v, %v; want ErrMalformed", v[:n], n, len(v), got, err)
			}
		}
	}
}

func TestDecodeIgnoresTrailingBytes(t *testing.T) {
	r := withRecrawl(t)
	got, err := Decode(append(Encode(r), 0xAB, 0xCD, 0x00))
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("Decode(record + trailing bytes) = %+v, %v; want %+v", got, err, r)
	}
	// A record of format version 3 before the recrawl tail reads as one
	// without it; an empty tail is no tail.
	r = full()
	for _, extra := range [][]byte{nil, {0x00}, {0x00, 0xAB}} {
		got, err := Decode(append(Encode(r), extra...))
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Errorf("Decode(record + %x) = %+v, %v; want %+v", extra, got, err, r)
		}
	}
}

// TestTailOnlyWhenUsed: a record without a history or a due recrawl is
// as long as before the tail was added.
func TestTailOnlyWhenUsed(t *testing.T) {
	r := full()
	with := r
	with.Due, with.DueJob = t0.Truncate(time.Second), 1
	if a, b := len(Encode(r)), len(Encode(with)); b <= a || b > a+1+10+5 {
		t.Errorf("len(Encode) without tail %d, with a due time %d: want the tail to cost 1 flag byte and the fields", a, b)
	}
	deep := append(Encode(r), tailDepth, 0xFF, 0xFF, 0xFF, 0x0F)
	if _, err := Decode(deep); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "depth") {
		t.Errorf("Decode(depth 2^32-1) error = %v, want ErrMalformed naming the depth", err)
	}
	bad := append(Encode(r), tailHistory, 0x07)
	if _, err := Decode(bad); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "change history") {
		t.Errorf("Decode(bad history) error = %v, want ErrMalformed naming the change history", err)
	}
}

// TestLeads: a response's leads replace the record's, a 304 keeps those
// of the content it confirms, a failed fetch or a response without leads
// drops them, and leads longer than MaxLeadsLen are not kept. Links of one
// page cost a fraction of their length.
func TestLeads(t *testing.T) {
	page := Record{}.Observe(Observation{At: t0, Status: 200, Leads: pageLinks, HasLeads: true})
	long := make([]string, MaxLeadsLen/100+1)
	for i := range long {
		long[i] = "http://a.test/" + strings.Repeat("p", 86)
	}
	for _, c := range []struct {
		name  string
		from  Record
		o     Observation
		want  []string
		wantH bool
	}{
		{"first response", Record{}, Observation{At: t0, Status: 200, Leads: pageLinks, HasLeads: true}, pageLinks, true},
		{"kept for no one", page, Observation{At: t0, Status: 200}, nil, false},
		{"new links", page, Observation{At: t0, Status: 200, Leads: pageLinks[:1], HasLeads: true}, pageLinks[:1], true},
		{"none on the page", page, Observation{At: t0, Status: 200, Leads: []string{}, HasLeads: true}, nil, true},
		{"304", page, Observation{At: t0, Status: 304, NotModified: true}, pageLinks, true},
		{"failed", page, Observation{At: t0, Error: "timeout", Leads: pageLinks, HasLeads: true}, nil, false},
		{"too long", page, Observation{At: t0, Status: 200, Leads: long, HasLeads: true}, nil, false},
		{"as long as allowed", page, Observation{At: t0, Status: 200, Leads: long[1:], HasLeads: true}, long[1:], true},
	} {
		r := c.from.Observe(c.o)
		if !reflect.DeepEqual(r.Leads, c.want) || r.HasLeads != c.wantH {
			t.Errorf("%s: leads %q (%v), want %q (%v)", c.name, r.Leads, r.HasLeads, c.want, c.wantH)
		}
		got, err := Decode(Encode(r))
		if err != nil || !reflect.DeepEqual(got.Leads, r.Leads) || got.HasLeads != r.HasLeads {
			t.Errorf("%s: Decode(Encode) leads %q (%v), %v; want %q (%v)", c.name, got.Leads, got.HasLeads, err, r.Leads, r.HasLeads)
		}
	}
	raw := 0
	for _, l := range long[1:] {
		raw += len(l)
	}
	bare := page
	bare.Leads, bare.HasLeads = nil, false
	with := bare
	with.Leads, with.HasLeads = long[1:], true
	if cost := len(Encode(with)) - len(Encode(bare)); cost > raw/10 {
		t.Errorf("%d links of %d bytes cost %d bytes, want a tenth of them at most (they share their beginnings)", len(long)-1, raw, cost)
	}
	bad := append(Encode(bare), tailLeads, 2, 0, 1, 'a', 3, 1, 'b') // the second shares 3 bytes of 1
	if _, err := Decode(bad); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "shared length") {
		t.Errorf("Decode(lead sharing more than the one before) error = %v, want ErrMalformed naming it", err)
	}
	many := append(Encode(bare), tailLeads, 0xFF, 0xFF, 0x03, 0, 0)
	if _, err := Decode(many); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "leads count") {
		t.Errorf("Decode(65535 leads in 2 bytes) error = %v, want ErrMalformed naming the count", err)
	}
}

func TestObserve(t *testing.T) {
	a, b := digest("a"), digest("b")
	type step struct {
		o                Observation
		status           int
		etag             string
		digest           [32]byte
		fetches, changes uint32
		changed          bool
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"first fetch is no change", []step{
			{Observation{Status: 200, ETag: "e1", Digest: a, HasDigest: true}, 200, "e1", a, 1, 0, false},
		}},
		{"same then different digest", []step{
			{Observation{Status: 200, Digest: a, HasDigest: true}, 200, "", a, 1, 0, false},
			{Observation{Status: 200, Digest: a, HasDigest: true}, 200, "", a, 2, 0, false},
			{Observation{Status: 200, Digest: b, HasDigest: true}, 200, "", b, 3, 1, true},
			{Observation{Status: 200, Digest: a, HasDigest: true}, 200, "", a, 4, 2, true},
		}},
		{"failure keeps content and validators", []step{
			{Observation{Status: 200, ETag: "e1", Digest: a, HasDigest: true}, 200, "e1", a, 1, 0, false},
			{Observation{Error: "timeout"}, 0, "e1", a, 2, 0, false},
			{Observation{Status: 200, ETag: "e2", Digest: b, HasDigest: true}, 200, "e2", b, 3, 1, true},
		}},
		{"304 keeps content, updates validators", []step{
			{Observation{Status: 200, ETag: "e1", Digest: a, HasDigest: true}, 200, "e1", a, 1, 0, false},
			{Observation{Status: 304, NotModified: true}, 304, "e1", a, 2, 0, false},
			{Observation{Status: 304, NotModified: true, ETag: "e2"}, 304, "e2", a, 3, 0, false},
		}},
		{"no digest on either side is no change", []step{
			{Observation{Status: 200}, 200, "", [32]byte{}, 1, 0, false},
			{Observation{Status: 200, Digest: a, HasDigest: true}, 200, "", a, 2, 0, false},
		}},
		{"too long a validator is dropped", []step{
			{Observation{Status: 200, ETag: strings.Repeat("x", MaxValidatorLen+1)}, 200, "", [32]byte{}, 1, 0, false},
		}},
	} {
		var r Record
		for i, s := range c.steps {
			s.o.At = t0.Add(time.Duration(i) * time.Minute)
			prev := Encode(r)
			r2 := r.Observe(s.o)
			if !bytes.Equal(Encode(r), prev) {
				t.Errorf("%s step %d: Observe modified its receiver", c.name, i)
			}
			r = r2
			last := r.History[len(r.History)-1]
			if r.Status != s.status || r.ETag != s.etag || r.Digest != s.digest || r.Fetches != s.fetches || r.Changes != s.changes || last.Changed != s.changed {
				t.Errorf("%s step %d: Observe = status %d etag %q digest %x fetches %d changes %d changed %v; want %d %q %x %d %d %v",
					c.name, i, r.Status, r.ETag, r.Digest[:4], r.Fetches, r.Changes, last.Changed,
					s.status, s.etag, s.digest[:4], s.fetches, s.changes, s.changed)
			}
			if !r.LastFetch.Equal(s.o.At) || r.Error != s.o.Error {
				t.Errorf("%s step %d: LastFetch, Error = %v, %q; want %v, %q", c.name, i, r.LastFetch, r.Error, s.o.At, s.o.Error)
			}
		}
	}
}

func TestHistoryIsBounded(t *testing.T) {
	var r Record
	for i := range 3 * HistoryLen {
		r = r.Observe(Observation{At: t0.Add(time.Duration(i) * time.Hour), Status: 200 + i})
		if want := min(i+1, HistoryLen); len(r.History) != want {
			t.Fatalf("after %d fetches: %d history events, want %d", i+1, len(r.History), want)
		}
	}
	for j, e := range r.History {
		i := 2*HistoryLen + j // the last HistoryLen fetches, oldest first
		if want := t0.Add(time.Duration(i) * time.Hour).Truncate(time.Second); !e.At.Equal(want) || e.Status != 200+i {
			t.Errorf("History[%d] = %v %d, want %v %d", j, e.At, e.Status, want, 200+i)
		}
	}
	// Observe copies: an older record's history is not overwritten.
	old := r
	oldFirst := old.History[0]
	_ = r.Observe(Observation{At: t0, Status: 1})
	_ = r.Observe(Observation{At: t0, Status: 2})
	if old.History[0] != oldFirst {
		t.Errorf("Observe changed an earlier record's History")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{1})
	f.Add(Encode(Record{}))
	f.Add(Encode(full()))
	f.Add(append(Encode(full()), 1, 2, 3))
	f.Add(Encode(withRecrawl(f)))
	f.Add(Encode(Record{LastFetch: t0, Status: 200, Fetches: 1, Depth: 3, HasDepth: true}))
	f.Add([]byte{1, 1, 0x80})
	f.Add(Encode(withLeads(withRecrawl(f), pageLinks...)))
	f.Fuzz(func(t *testing.T, v []byte) {
		r, err := Decode(v)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode(%x) error %v does not wrap ErrMalformed", v, err)
			}
			return
		}
		v2 := Encode(r)
		r2, err := Decode(v2)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode(%x))) error %v", v, err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("Decode(Encode(Decode(%x))) = %+v, want %+v", v, r2, r)
		}
		if v3 := Encode(r2); !bytes.Equal(v2, v3) {
			t.Fatalf("Encode not stable: %x then %x", v2, v3)
		}
		// Folding a fetch into any decodable record gives a decodable one.
		o := r.Observe(Observation{At: time.Unix(1, 0), Status: 200, Digest: digest("z"), HasDigest: true})
		if _, err := Decode(Encode(o)); err != nil {
			t.Fatalf("Decode(Encode(Observe)) error %v", err)
		}
	})
}

func BenchmarkEncodeDecode(b *testing.B) {
	r := full()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(Encode(r)); err != nil {
			b.Fatal(err)
		}
	}
}
