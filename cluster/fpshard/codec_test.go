package fpshard

import (
	"reflect"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store/dedup"
	"github.com/trawl-crawler/trawl/simhash"
)

// TestCodecRoundTrip: every op decodes to what was encoded, in order.
func TestCodecRoundTrip(t *testing.T) {
	orig := dedup.Original{URL: "http://a.test/x", Date: time.Unix(1_700_000_000, 5).UTC(), File: "f.warc.gz", Offset: 77, RecordID: "<urn:uuid:1>", Job: 3}
	sum := [32]byte{1, 2, 3, 31: 9}
	pr := simhash.HTMLContent([]byte("<title>t</title><p>some words of a page</p>")).Print(nil)
	pr.Probe, pr.Words = 0, 0 // not sent: the probes are, and the words are not needed
	probes := []dedup.Probe{{Band: 0, Value: 7}, {Band: 3, Value: 0xffff}}
	msg := []byte{version}
	ends := map[int]bool{len(msg): true} // where a whole op ends
	for _, enc := range [][]byte{
		appendExact(nil, sum),
		appendNear(nil, pr, 0.75, probes),
		appendAddExact(nil, sum, orig),
		appendAddNear(nil, pr, "http://a.test/near", 1<<32-1, 0b1000),
	} {
		msg = append(msg, enc...)
		ends[len(msg)] = true
	}
	ops, err := decodeOps(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := []op{
		{kind: opExact, sum: sum},
		{kind: opNear, print: pr, minRes: float64(quantize(0.75)) / 65535, probes: probes},
		{kind: opAddExact, sum: sum, orig: orig},
		{kind: opAddNear, print: pr, url: "http://a.test/near", job: 1<<32 - 1, bands: 0b1000},
	}
	if len(ops) != len(want) {
		t.Fatalf("decoded %d ops, want %d", len(ops), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(ops[i], want[i]) {
			t.Errorf("op %d = %+v, want %+v", i, ops[i], want[i])
		}
	}
	for n := 1; n < len(msg); n++ { // every cut inside an op is refused
		if ops, err := decodeOps(msg[:n]); err == nil && !ends[n] {
			t.Errorf("decodeOps of the first %d bytes: %d ops, no error", n, len(ops))
		}
	}
	m := dedup.Match{URL: "http://b.test/", Job: 4, Resemblance: float64(quantize(0.9)) / 65535}
	reply := []byte{version, statusOK}
	reply = appendAnswer(reply, answer{})
	reply = appendAnswer(reply, answer{found: true, payload: encodeMatch(m)})
	st, answers, err := decodeReply(reply, 2)
	if err != nil || st != statusOK || len(answers) != 2 || answers[0].found || !answers[1].found {
		t.Fatalf("decodeReply = %d, %+v, %v", st, answers, err)
	}
	if got, err := decodeMatch(answers[1].payload); err != nil || got != m {
		t.Errorf("decodeMatch = %+v, %v; want %+v", got, err, m)
	}
	if _, _, err := decodeReply(reply, 3); err == nil {
		t.Error("a reply with fewer answers than lookups: no error")
	}
	if st, _, err := decodeReply([]byte{version, statusNotServed}, 5); err != nil || st != statusNotServed {
		t.Errorf("not served reply: %d, %v", st, err)
	}
}

// FuzzDecode: hostile bytes from another member never panic a decoder,
// and what decodes encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	msg := appendNear(appendExact([]byte{version}, [32]byte{7}), simhash.Print{FP: 5}, 0.5, []dedup.Probe{{Band: 1, Value: 2}})
	msg = appendAddNear(appendAddExact(msg, [32]byte{8}, dedup.Original{URL: "u"}), simhash.Print{FP: 6}, "v", 2, 2)
	f.Add(msg)
	f.Add([]byte{version, statusOK, 1, 3, 2, 0, 'x'})
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeReply(data, 2)
		decodeMatch(data)
		ops, err := decodeOps(data)
		if err != nil {
			return
		}
		again := []byte{version}
		for _, o := range ops {
			switch o.kind {
			case opExact:
				again = appendExact(again, o.sum)
			case opNear:
				again = appendNear(again, o.print, o.minRes, o.probes)
			case opAddExact:
				again = appendAddExact(again, o.sum, o.orig)
			case opAddNear:
				again = appendAddNear(again, o.print, o.url, o.job, o.bands)
			}
		}
		if _, err := decodeOps(again); err != nil {
			t.Fatalf("re-encoded ops do not decode: %v", err)
		}
	})
}
