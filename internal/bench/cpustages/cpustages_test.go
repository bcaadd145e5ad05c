package cpustages

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

const m = "github.com/trawl-crawler/trawl/"

// build writes a CPU profile whose samples have the given stacks (leaf
// first) and values in nanoseconds.
func build(t *testing.T, samples []sample) []byte {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	funcs := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if f := funcs[name]; f != nil {
			return f
		}
		f := &profile.Function{ID: uint64(len(funcs) + 1), Name: name}
		funcs[name] = f
		p.Function = append(p.Function, f)
		return f
	}
	for _, s := range samples {
		var locs []*profile.Location
		for _, frame := range s.stack {
			// A frame "a|b" is one location with b inlined into a: b is
			// the innermost line, listed first.
			loc := &profile.Location{ID: uint64(len(p.Location) + 1)}
			names := strings.Split(frame, "|")
			for i := len(names) - 1; i >= 0; i-- {
				loc.Line = append(loc.Line, profile.Line{Function: fn(names[i])})
			}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{1, s.ns}})
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type sample struct {
	stack []string
	ns    int64
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name  string
		stack []string
		want  string
	}{
		{"gzip of a WARC record", []string{"github.com/klauspost/compress/flate.(*fastEncL5).Encode", m + "warc.(*encoder).encode", m + "node.(*Node).archive", m + "node.(*Node).fetchPage"}, WARC},
		{"WARC fsync via internal/poll", []string{"syscall.Syscall", "internal/poll.(*FD).Fsync", "os.(*File).Sync", m + "warc.(*Writer).syncRound"}, WARC},
		{"response gunzip", []string{"compress/flate.(*decompressor).huffmanBlock", "compress/gzip.(*Reader).Read", m + "fetch.(*Fetcher).Fetch"}, Fetch},
		{"response gunzip by klauspost's reader", []string{"github.com/klauspost/compress/flate.(*decompressor).huffmanBytesReader", "github.com/klauspost/compress/flate.(*decompressor).Read", "github.com/klauspost/compress/gzip.(*Reader).Read", m + "fetch.readCapped", m + "fetch.(*Fetcher).Fetch"}, Fetch},
		{"response zstd", []string{"github.com/klauspost/compress/zstd.(*blockDec).decodeBuf", m + "fetch.zstdReader.Read", m + "fetch.(*Fetcher).Fetch"}, Fetch},
		{"transport read loop", []string{"syscall.Syscall", "internal/poll.(*FD).Read", "net.(*conn).Read", "net/http.(*persistConn).readLoop"}, Fetch},
		{"payload SHA-256", []string{"crypto/internal/fips140/sha256.blockSHANI", "crypto/sha256.Sum256", m + "node.payloadSum", m + "node.(*Node).fetchPage"}, Digests},
		{"WARC block SHA-256", []string{"crypto/internal/fips140/sha256.blockSHANI", "crypto/sha256.(*Digest).Write", m + "warc.newRecord", m + "warc.(*Writer).Write", m + "node.(*Node).archive"}, WARC},
		{"SimHash inside link extraction", []string{m + "simhash.(*words).write", m + "links.ExtractWith", m + "node.(*Node).extract"}, Digests},
		{"tokenizer", []string{"golang.org/x/net/html.(*Tokenizer).readByte", m + "links.ExtractWith"}, Links},
		{"URL parsing inside link extraction", []string{"github.com/nlnwa/whatwg-url/url.(*parser).BasicParser", m + "urlnorm.Parse", m + "links.ExtractWith"}, URLs},
		{"inlined URL helper", []string{"runtime.memmove", m + "links.resolve|" + m + "urlnorm.Canonical"}, URLs},
		{"seen gate", []string{m + "internal/store/urlseen.(*Bloom).Add", m + "node.(*Node).complete"}, Seen},
		{"pebble fdatasync", []string{"syscall.Syscall", "golang.org/x/sys/unix.Fdatasync", "github.com/cockroachdb/pebble/v2/record.(*LogWriter).flushLoop"}, Store},
		{"frontier", []string{m + "frontier.(*Frontier).Lease", m + "node.(*Node).dispatch"}, Frontier},
		{"GC worker", []string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, GC},
		{"GC assist in an allocation", []string{"runtime.scanobject", "runtime.gcDrainN", "runtime.gcAssistAlloc", "runtime.mallocgc", m + "links.ExtractWith"}, GC},
		{"scheduler", []string{"runtime.futex", "runtime.findRunnable", "runtime.schedule"}, Other},
	}
	var samples []sample
	want := map[string]time.Duration{}
	for i, tt := range tests {
		ns := int64(i+1) * 10_000_000
		samples = append(samples, sample{tt.stack, ns})
		want[tt.want] += time.Duration(ns)
	}
	got, err := Split(bytes.NewReader(build(t, samples)))
	if err != nil {
		t.Fatal(err)
	}
	var total, wantTotal time.Duration
	for _, s := range Order {
		if got[s] != want[s] {
			t.Errorf("%s: %v, want %v", s, got[s], want[s])
		}
		total += got[s]
		wantTotal += want[s]
	}
	if len(got) != len(Order) || total != wantTotal {
		t.Errorf("%d stages totalling %v, want %d totalling %v", len(got), total, len(Order), wantTotal)
	}
	// Each case alone, to name the one that goes wrong.
	for i, tt := range tests {
		got, err := Split(bytes.NewReader(build(t, []sample{{tt.stack, 1}})))
		if err != nil {
			t.Fatal(err)
		}
		if got[tt.want] != 1 {
			t.Errorf("case %d (%s): not counted as %q: %v", i, tt.name, tt.want, got)
		}
	}
}

func TestSplitRejects(t *testing.T) {
	if _, err := Split(strings.NewReader("not a profile")); err == nil {
		t.Error("Split of garbage: nil error")
	}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := Split(&b); err == nil || !strings.Contains(err.Error(), "not a CPU profile") {
		t.Errorf("Split of a heap profile: %v, want 'not a CPU profile'", err)
	}
}
