package robotscache

import (
	"bytes"
	"errors"
	"github.com/trawl-crawler/trawl/robots"
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	recT0 = time.Unix(1_800_000_000, 7).UTC()
	recT1 = recT0.Add(90 * time.Minute)
)

func TestRecordRoundTrip(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /x\n")
	tests := []struct {
		name string
		r    record
	}{
		{"copy", record{at: recT0, copy: &storedCopy{status: 200, fetched: recT0, body: body}}},
		{"copy 404, empty body", record{at: recT0, copy: &storedCopy{status: 404, fetched: recT0, body: []byte{}}}},
		{"copy 301 (chain too long)", record{at: recT0, copy: &storedCopy{status: 301, fetched: recT0, body: []byte{}}}},
		{"failure, no copy", record{attempts: 3, at: recT1, outageSince: recT0}},
		{"failure with copy", record{attempts: 1, at: recT1, outageSince: recT1, copy: &storedCopy{status: 200, fetched: recT0, body: body}}},
		{"pending, first fetch", record{pending: true, at: recT0}},
		{"pending in outage with copy", record{pending: true, attempts: 7, at: recT1, outageSince: recT0, copy: &storedCopy{status: 200, fetched: recT0, body: body}}},
		{"zero at", record{}},
		{"redirect hop", record{at: recT0, hops: 1, hopAt: recT1, next: "https://example.com/robots-real.txt"}},
		{"pending hop with copy", record{pending: true, at: recT1, hops: 5, hopAt: recT1, next: "http://a.test/r", copy: &storedCopy{status: 200, fetched: recT0, body: body}}},
	}
	for _, tt := range tests {
		v := encodeRecord(tt.r)
		got, err := decodeRecord(v)
		if err != nil {
			t.Errorf("%s: decodeRecord(encodeRecord(%+v)) error %v", tt.name, tt.r, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.r) {
			t.Errorf("%s: decodeRecord(encodeRecord(r)) = %+v, want %+v", tt.name, got, tt.r)
		}
		// Every strict prefix is refused, except for a copy's body, which
		// runs to the end.
		fixed := len(v)
		if tt.r.copy != nil {
			fixed -= len(tt.r.copy.body)
		}
		for i := range fixed {
			if _, err := decodeRecord(v[:i]); err == nil {
				t.Errorf("%s: decodeRecord accepted the record cut to %d of %d bytes", tt.name, i, len(v))
			}
		}
	}
}

func TestRecordLayout(t *testing.T) {
	// Drawn in record.go: version 4, flags, attempts, at, outage since,
	// then status, fetched at and body.
	r := record{pending: true, attempts: 2, at: time.Unix(0, 3), outageSince: time.Unix(0, 1), copy: &storedCopy{status: 200, fetched: time.Unix(0, 2), body: []byte("ab")}}
	want := []byte{4, 0x03, 2, 6, 2, 0xc8, 0x01, 4, 'a', 'b'}
	if got := encodeRecord(r); !bytes.Equal(got, want) {
		t.Errorf("encodeRecord(%+v) = % x, want % x", r, got, want)
	}
}

func TestDecodeRecordRefuses(t *testing.T) {
	ok := encodeRecord(record{attempts: 1, at: recT1, outageSince: recT0})
	tests := []struct {
		name string
		v    []byte
	}{
		{"nil", nil},
		{"old copy layout (version 1)", append([]byte{1, 200, 1, 2}, "User-agent: *"...)},
		{"old failure tag", []byte{2, 3, 2}},
		{"old pending tag", []byte{3, 0, 2}},
		{"unknown flags", []byte{4, 0x08, 0, 0, 0}},
		{"hop flag, no hop", []byte{4, flagHop, 0, 0, 0}},
		{"hop count 0", []byte{4, flagHop, 0, 0, 0, 0, 2, 1, 'x'}},
		{"hop count 6", []byte{4, flagHop, 0, 0, 0, 6, 2, 1, 'x'}},
		{"hop at zero", []byte{4, flagHop, 0, 0, 0, 1, 0, 1, 'x'}},
		{"hop URL empty", []byte{4, flagHop, 0, 0, 0, 1, 2, 0}},
		{"hop URL cut", []byte{4, flagHop, 0, 0, 0, 1, 2, 3, 'x'}},
		{"hop URL too long", append([]byte{4, flagHop, 0, 0, 0, 1, 2, 0x81, 0x80, 0x01}, strings.Repeat("x", maxHopURL+1)...)},
		{"trailing bytes without a copy", append(append([]byte{}, ok...), 'x')},
		{"attempts without outage start", []byte{4, 0, 1, 2, 0}},
		{"outage start without attempts", []byte{4, 0, 0, 2, 2}},
		{"attempts too many", []byte{4, 0, 0xff, 0xff, 0xff, 0x7f, 2, 2}},
		{"copy of a 503", []byte{4, flagCopy, 0, 2, 0, 0xf7, 0x03, 2}},
		{"copy of a 429", []byte{4, flagCopy, 0, 2, 0, 0xad, 0x03, 2}},
		{"copy of a 100", []byte{4, flagCopy, 0, 2, 0, 100, 2}},
		{"copy status overflow", []byte{4, flagCopy, 0, 2, 0, 0xc8, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 2}},
		{"copy body too long", append([]byte{4, flagCopy, 0, 2, 0, 0xc8, 0x01, 2}, strings.Repeat("x", robots.MaxBytes+2)...)},
	}
	for _, tt := range tests {
		if r, err := decodeRecord(tt.v); err == nil || !errors.Is(err, errRecord) {
			t.Errorf("%s: decodeRecord(% x) = %+v, %v; want an errRecord", tt.name, clipBytes(tt.v), r, err)
		}
	}
}

func clipBytes(b []byte) []byte {
	if len(b) > 16 {
		return b[:16]
	}
	return b
}

// FuzzRecord: any bytes under an 'r' key decode to a record or an error,
// never a panic; a decoded record encodes to bytes that decode to the same
// record, and encoding is then stable.
func FuzzRecord(f *testing.F) {
	body := []byte("User-agent: *\nCrawl-delay: 1\n")
	f.Add(encodeRecord(record{at: recT0, copy: &storedCopy{status: 200, fetched: recT0, body: body}}))
	f.Add(encodeRecord(record{attempts: 2, at: recT1, outageSince: recT0}))
	f.Add(encodeRecord(record{pending: true, attempts: 2, at: recT1, outageSince: recT0, copy: &storedCopy{status: 404, fetched: recT0}}))
	f.Add([]byte{1, 200, 1, 2})
	f.Add(encodeRecord(record{pending: true, at: recT1, hops: 2, hopAt: recT1, next: "http://a.test/r", copy: &storedCopy{status: 200, fetched: recT0, body: body}}))
	f.Fuzz(func(t *testing.T, v []byte) {
		r, err := decodeRecord(v)
		if err != nil {
			return
		}
		enc := encodeRecord(r)
		again, err := decodeRecord(enc)
		if err != nil {
			t.Fatalf("decodeRecord(% x) = %+v, but its encoding % x does not decode: %v", v, r, enc, err)
		}
		if r.copy != nil && len(r.copy.body) == 0 {
			r.copy.body = again.copy.body // nil and empty are the same body
		}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("record % x does not round-trip: %+v, then %+v", v, r, again)
		}
		if enc2 := encodeRecord(again); !bytes.Equal(enc2, enc) {
			t.Fatalf("encoding of % x is not stable: % x, then % x", v, enc, enc2)
		}
		if r.copy != nil && r.copy.policy().Unavailable() {
			t.Fatalf("record % x keeps an unreachable answer as its copy", v)
		}
	})
}
