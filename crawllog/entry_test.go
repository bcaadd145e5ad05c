package crawllog

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 12, 2, 3, 4, 5, 678_000_000, time.UTC)

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
		want string
	}{
		{"fetch archived", Entry{Time: t0, Job: 3, URL: "http://a.test/x", Status: 200, Bytes: 5120, MIME: "text/html",
			Duration: 12345678 * time.Nanosecond, Depth: 2, Via: "http://a.test/", Digest: "sha256:ABC", WARC: "trawl-1.warc.gz", Offset: 0},
			`{"time":"2026-12-02T03:04:05.678Z","job":3,"url":"http://a.test/x","status":200,"bytes":5120,"mime":"text/html","duration_ms":12.346,"depth":2,"via":"http://a.test/","digest":"sha256:ABC","warc":"trawl-1.warc.gz","offset":0}`},
		{"revisit", Entry{Time: t0, Job: 1, URL: "http://a.test/y", Status: 200, Bytes: 10, Duration: time.Millisecond, Dedup: DedupExact,
			Original: "http://a.test/x", WARC: "w.warc.gz", Offset: 9876543210},
			`{"time":"2026-12-02T03:04:05.678Z","job":1,"url":"http://a.test/y","status":200,"bytes":10,"duration_ms":1.000,"depth":0,"dedup":"exact","original":"http://a.test/x","warc":"w.warc.gz","offset":9876543210}`},
		{"robots fetch failed", Entry{Time: t0, URL: "https://b.test/robots.txt", Robots: true, Error: "dns", Duration: 3 * time.Second},
			`{"time":"2026-12-02T03:04:05.678Z","job":0,"url":"https://b.test/robots.txt","robots":true,"error":"dns","bytes":0,"duration_ms":3000.000,"depth":0}`},
		{"drop, offset without WARC left out", Entry{Time: t0, Job: 2, URL: "http://c.test/cal/2026/12", Depth: 7, Offset: 55, Dropped: DropTrap, Detail: "shape run > 3"},
			`{"time":"2026-12-02T03:04:05.678Z","job":2,"url":"http://c.test/cal/2026/12","bytes":0,"duration_ms":0.000,"depth":7,"dropped":"trap","detail":"shape run \u003e 3"}`},
		{"usage stated, purpose denied, not archived", Entry{Time: t0, Job: 4, URL: "http://d.test/", Status: 200, Bytes: 3, Usage: "ai-train=deny,search=allow", Denied: "ai-train"},
			`{"time":"2026-12-02T03:04:05.678Z","job":4,"url":"http://d.test/","status":200,"bytes":3,"duration_ms":0.000,"depth":0,"usage":"ai-train=deny,search=allow","denied":"ai-train"}`},
		{"negative duration, local time", Entry{Time: time.Date(2026, 1, 1, 1, 0, 0, 999_999_999, time.FixedZone("x", 3600)), URL: "u", Duration: -1500 * time.Microsecond},
			`{"time":"2026-01-01T00:00:00.999Z","job":0,"url":"u","bytes":0,"duration_ms":-1.500,"depth":0}`},
		{"escapes", Entry{Time: t0, URL: "http://a.test/\"q\"\\\n\r\t\x00\x1f\x7f é\u2028\u2029\xff\xc3", Detail: "日本"},
			`{"time":"2026-12-02T03:04:05.678Z","job":0,"url":"http://a.test/\"q\"\\\n\r\t\u0000\u001f` + "\x7f é" + `\u2028\u2029\ufffd\ufffd","bytes":0,"duration_ms":0.000,"depth":0,"detail":"日本"}`},
	}
	for _, tt := range tests {
		got := string(AppendJSON(nil, &tt.e))
		want := strings.ReplaceAll(tt.want, `\u003e`, ">") // written here as encoding/json would, to show it is not HTML-escaped
		if got != want+"\n" {
			t.Errorf("%s: AppendJSON =\n%s\nwant\n%s", tt.name, got, want)
			continue
		}
		back, err := Parse([]byte(got))
		if err != nil {
			t.Errorf("%s: Parse(AppendJSON) error: %v", tt.name, err)
			continue
		}
		if w := normalized(tt.e); back != w {
			t.Errorf("%s: Parse(AppendJSON(e)) =\n%+v\nwant\n%+v", tt.name, back, w)
		}
	}
}

// normalized is e as it comes back from a round trip: time in UTC cut to
// milliseconds, duration rounded to the microsecond, invalid UTF-8 bytes
// replaced one by one, Offset dropped without a WARC.
func normalized(e Entry) Entry {
	e.Time = e.Time.UTC().Truncate(time.Millisecond)
	e.Duration = e.Duration.Round(time.Microsecond) / time.Microsecond * time.Microsecond
	for _, s := range []*string{&e.URL, &e.Error, &e.MIME, &e.Via, &e.Digest, &e.Dedup, &e.Original, &e.WARC, &e.Dropped, &e.Detail} {
		*s = validUTF8(*s)
	}
	if e.WARC == "" {
		e.Offset = 0
	}
	return e
}

func validUTF8(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // RuneError for each invalid byte
		i += n
	}
	return b.String()
}

// TestAppendStringMatchesEncodingJSON: every string is escaped as
// encoding/json escapes it, apart from its HTML escaping.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var all strings.Builder
	for b := range 256 {
		all.WriteByte(byte(b))
	}
	for _, s := range []string{"", "plain", all.String(), "\u2028\u2029\ufffd", "a\xe2\x80", "\xed\xa0\x80", "🙂\x80🙂"} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := string(appendString(nil, s)), strings.TrimSuffix(buf.String(), "\n"); got != want {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestMarshalJSON(t *testing.T) {
	e := Entry{Time: t0, Job: 4, URL: "http://a.test/", Status: 404, Duration: 2 * time.Millisecond, WARC: "f", Offset: 7}
	b, err := json.Marshal([]Entry{e})
	if err != nil {
		t.Fatal(err)
	}
	line := AppendJSON(nil, &e)
	if want := "[" + string(line[:len(line)-1]) + "]"; string(b) != want {
		t.Errorf("json.Marshal = %s, want %s", b, want)
	}
	var back []Entry
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 1 || back[0] != e {
		t.Errorf("json.Unmarshal = %+v, %v; want %+v", back, err, e)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		line, want string
	}{
		{``, "unexpected end of JSON input"},
		{`{"time":"2026-12-02T03:04:05.678Z","url":"u"`, "unexpected end of JSON input"},
		{`{"time":"2026-12-02T03:04:05.678Z","url":"u"} x`, "invalid character 'x' after top-level value"},
		{`[1]`, "a JSON array, not an object"},
		{`{"url":"u"}`, "field time missing"},
		{`{"time":"yesterday","url":"u"}`, `field time: "yesterday" is not an RFC 3339 time`},
		{`{"time":"2026-12-02T03:04:05.678Z"}`, "field url missing"},
		{`{"time":"2026-12-02T03:04:05.678Z","url":"u","status":"200"}`, "field status: string value where int was expected"},
		{`{"time":"2026-12-02T03:04:05.678Z","url":"u","job":-1}`, "field job: number -1 value where uint32 was expected"},
		{`{"time":"2026-12-02T03:04:05.678Z","url":"u","duration_ms":1e300}`, "field duration_ms: 1e300 is not a duration"},
		{`{"time":"2026-12-02T03:04:05.678Z","url":"u","duration_ms":9223372036854.775808}`, "field duration_ms: 9223372036854.775808 is not a duration"},
		{`{"time":"2026-12-02T03:04:05.678Z","url":"u","duration_ms":"fast"}`, "invalid number literal"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.line))
		if err == nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s) error = %v, want ErrMalformed saying %q", tt.line, err, tt.want)
		}
	}
}

func TestParseLenient(t *testing.T) {
	// Unknown fields (a newer trawl), "\r\n", an exponent and more decimals
	// than AppendJSON writes.
	e, err := Parse([]byte(`{"time":"2026-12-02T04:04:05.678+01:00","url":"u","new_field":[1,2],"duration_ms":1.5e3,"offset":4}` + "\r\n"))
	want := Entry{Time: t0, URL: "u", Duration: 1500 * time.Millisecond}
	if err != nil || e != want {
		t.Errorf("Parse = %+v, %v; want %+v", e, err, want)
	}
	if e, err := Parse([]byte(`{"time":"2026-12-02T03:04:05.678Z","url":"u","duration_ms":0.1234567}`)); err != nil || e.Duration != 123456*time.Nanosecond {
		t.Errorf("Parse(0.1234567 ms) = %v, %v; want 123.456µs", e.Duration, err)
	}
}

func TestDurationExtremes(t *testing.T) {
	for _, d := range []time.Duration{math.MaxInt64, math.MinInt64, math.MaxInt64 - 499, -999, 999} {
		line := AppendJSON(nil, &Entry{Time: t0, URL: "u", Duration: d})
		e, err := Parse(line)
		if want := normalized(Entry{Duration: d}).Duration; err != nil || e.Duration != want {
			t.Errorf("duration %d: %s parsed as %d, %v; want %d", d, line, e.Duration, err, want)
		}
	}
}

func TestMediaType(t *testing.T) {
	for in, want := range map[string]string{"text/html; charset=utf-8": "text/html", " Application/JSON ": "application/json", "": "", ";x=y": ""} {
		if got := MediaType(in); got != want {
			t.Errorf("MediaType(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts survives a round
// trip through AppendJSON unchanged.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"time":"2026-12-02T03:04:05.678Z","job":3,"url":"http://a.test/x","status":200,"bytes":5120,"mime":"text/html","duration_ms":12.346,"depth":2,"via":"http://a.test/","warc":"w","offset":9}`))
	f.Add([]byte(`{"time":"2026-12-02T03:04:05Z","url":"\ud800\u2028","dropped":"trap","detail":"\u0000"}`))
	f.Add([]byte(`{"time":"2026-12-02T03:04:05.123456789+05:00","url":"","duration_ms":-1e-9}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := Parse(line)
		if err != nil {
			return
		}
		if y := e.Time.Year(); y < 0 || y > 9999 {
			return // AppendJSON cannot write it so that it parses again
		}
		out := AppendJSON(nil, &e)
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its re-encoding %q: %v", line, out, err)
		}
		if want := normalized(e); back != want {
			t.Fatalf("round trip of %q:\n%+v\nwant\n%+v", line, back, want)
		}
	})
}

// FuzzRoundTrip: any Entry AppendJSON writes is one valid JSON line that
// Parse reads back as the entry, normalised.
func FuzzRoundTrip(f *testing.F) {
	f.Add(t0.UnixMilli(), uint32(1), "http://a.test/\xff", 200, "", int64(10), "text/html", int64(12345678), 2, "http://a.test/", "sha256:X", "exact", "w.warc.gz", int64(5), "", "\u2028\x00")
	f.Add(int64(-62135596800000), uint32(0), "", 0, "timeout", int64(-1), "", int64(math.MinInt64), -1, "", "", "", "", int64(-9), "robots", "")
	f.Fuzz(func(t *testing.T, ms int64, job uint32, url string, status int, errClass string, n int64, mime string, dur int64, depth int, via, digest, dedup, warc string, off int64, dropped, detail string) {
		tm := time.UnixMilli(ms % 253402300800000).UTC() // within years 0000-9999
		if tm.Year() < 0 {
			tm = t0
		}
		e := Entry{Time: tm, Job: job, URL: url, Status: status, Error: errClass, Bytes: n, MIME: mime, Duration: time.Duration(dur), Depth: depth,
			Via: via, Digest: digest, Dedup: dedup, Original: via, WARC: warc, Offset: off, Dropped: dropped, Detail: detail, Robots: depth%2 == 0}
		line := AppendJSON(nil, &e)
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Fatalf("AppendJSON wrote a newline inside the line: %q", line)
		}
		if !json.Valid(line) {
			t.Fatalf("AppendJSON wrote invalid JSON: %q", line)
		}
		back, err := Parse(line)
		if err != nil {
			t.Fatalf("Parse(%q): %v", line, err)
		}
		if want := normalized(e); back != want {
			t.Fatalf("round trip of %q:\n%+v\nwant\n%+v", line, back, want)
		}
	})
}

// benchEntry is a typical archived fetch.
var benchEntry = Entry{Time: t0, Job: 3, URL: "https://www.example.org/articles/2026/12/some-long-article-title?page=2&sort=new",
	Status: 200, Bytes: 48213, MIME: "text/html", Duration: 183456 * time.Microsecond, Depth: 4,
	Via: "https://www.example.org/articles/2026/12/", Digest: "sha256:XKNYFGYJ4AHWI6NPUMWHYLWKNNVIMYX27KQAKOGEHTT3BGXYXUSQ",
	WARC: "trawl-20261202030405-00017.warc.gz", Offset: 123456789}

func BenchmarkAppendJSON(b *testing.B) {
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendJSON(buf[:0], &benchEntry)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkParse(b *testing.B) {
	line := AppendJSON(nil, &benchEntry)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(line); err != nil {
			b.Fatal(err)
		}
	}
}
