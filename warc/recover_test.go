package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/nlnwa/gowarc/v3"
)

// crawlFile is a finished file written by a Writer, with the layout of its
// gzip members as the Writer reported it.
type crawlFile struct {
	name    string // base name of the finished file
	data    []byte // its bytes
	infoEnd int64  // end of the warcinfo member
	locs    []Location
	ends    []int64  // end of each exchange (its request member)
	urls    []string // WARC-Target-URI of each exchange
}

// writeCrawlFile writes exs with a Writer and returns the one file it made.
func writeCrawlFile(t testing.TB, exs []*Exchange) crawlFile {
	t.Helper()
	w := newTestWriter(t, Options{})
	var cf crawlFile
	for _, ex := range exs {
		loc, err := w.Write(ex)
		if err != nil {
			t.Fatalf("Write(%q): %v", ex.URL, err)
		}
		cf.locs = append(cf.locs, loc)
		cf.urls = append(cf.urls, ex.URL)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if files := w.Files(); len(files) != 1 {
		t.Fatalf("Files() = %q, want one file", files)
	}
	path := w.Files()[0]
	var err error
	if cf.data, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	cf.name = filepath.Base(path)
	cf.infoEnd = cf.locs[0].Offset
	for i := range cf.locs {
		end := int64(len(cf.data))
		if i+1 < len(cf.locs) {
			end = cf.locs[i+1].Offset
		}
		cf.ends = append(cf.ends, end)
	}
	return cf
}

// members returns the bytes of the warcinfo member (index 0), then of each
// response and request member in order.
func (cf *crawlFile) members() [][]byte {
	out := [][]byte{cf.data[:cf.infoEnd]}
	for i, loc := range cf.locs {
		respEnd := loc.Offset + loc.Length
		out = append(out, cf.data[loc.Offset:respEnd], cf.data[respEnd:cf.ends[i]])
	}
	return out
}

// memberStarts returns the offset of every member, the warcinfo's first.
func (cf *crawlFile) memberStarts() []int64 {
	out := []int64{0}
	for _, loc := range cf.locs {
		out = append(out, loc.Offset, loc.Offset+loc.Length)
	}
	return out
}

// want returns what recovering the first cut bytes of cf must keep: the
// number of whole exchanges and the bytes they end at.
func (cf *crawlFile) want(cut int64) (exchanges int, keep int64) {
	for i, end := range cf.ends {
		if end <= cut {
			exchanges, keep = i+1, end
		}
	}
	return exchanges, keep
}

// putOpen writes data as dir/name+OpenSuffix and returns that path.
func putOpen(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name+OpenSuffix)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// dirNames lists the names in dir.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// gzipMember compresses s into one gzip member with the given level and
// header name.
func gzipMember(t testing.TB, s []byte, level int, name string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	zw.Name = name
	if _, err := zw.Write(s); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gunzip decompresses one gzip member.
func gunzip(t testing.TB, member []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(member))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkRecovered checks what Recover did with the first cut bytes of cf,
// which were in dir as cf.name+OpenSuffix: the file is cut back to its last
// whole exchange and renamed, or removed if it held none.
func checkRecovered(cf *crawlFile, dir string, cut int64, got []Recovered) error {
	if len(got) != 1 {
		return fmt.Errorf("cut %d: Recover = %+v, want one file", cut, got)
	}
	r := got[0]
	n, keep := cf.want(cut)
	final := filepath.Join(dir, cf.name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if n == 0 {
		if r.File != "" || r.Kept != 0 || r.CutBytes != cut || r.URIs != nil {
			return fmt.Errorf("cut %d: Recover = %+v, want the file removed with %d bytes cut", cut, r, cut)
		}
		if len(entries) != 0 {
			return fmt.Errorf("cut %d: directory holds %v, want nothing", cut, entries)
		}
		return nil
	}
	want := Recovered{File: final, Kept: 1 + 2*n, CutBytes: cut - keep, URIs: cf.urls[:n]}
	if r.File != want.File || r.Kept != want.Kept || r.CutBytes != want.CutBytes || !slices.Equal(r.URIs, want.URIs) {
		return fmt.Errorf("cut %d: Recover = %+v, want %+v", cut, r, want)
	}
	if len(entries) != 1 || entries[0].Name() != cf.name {
		return fmt.Errorf("cut %d: directory holds %v, want %s", cut, entries, cf.name)
	}
	b, err := os.ReadFile(final)
	if err != nil {
		return fmt.Errorf("cut %d: %w", cut, err)
	}
	if !bytes.Equal(b, cf.data[:keep]) {
		return fmt.Errorf("cut %d: recovered file is %d bytes, want the first %d bytes of the original", cut, len(b), keep)
	}
	return nil
}

// gowarcMu serialises gowarc readers started from parallel test
// goroutines: gowarc v3.1.0 writes a package variable of
// github.com/google/uuid (uuid.EnableRandPool) whenever it sets up a
// record, a data race when two goroutines read at once.
var gowarcMu sync.Mutex

// countRecords reads path with gowarc's strict reader, checking digests,
// and returns the number of records.
func countRecords(path string) (int, error) {
	r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation())
	if err != nil {
		return 0, err
	}
	defer func() { _ = r.Close() }()
	for n := 0; ; n++ {
		rec, err := r.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("record %d: %w", n, err)
		}
		v, err := rec.WarcRecord.ValidateDigest()
		_ = rec.Close()
		if err == nil && len(v) > 0 {
			err = errors.Join(v...)
		}
		if err == nil && len(rec.Validation) > 0 {
			err = errors.Join(rec.Validation...)
		}
		if err != nil {
			return n, fmt.Errorf("record %d: %w", n, err)
		}
	}
}

// TestRecoverEveryCut cuts a file at every byte offset. The planner (scan)
// runs on every cut; Recover runs on disk, with a strict gowarc read-back,
// at every offset of the last exchange, around every member boundary and at
// a sample of the others.
func TestRecoverEveryCut(t *testing.T) {
	if testing.Short() {
		t.Skip("a cut at every byte: the full suite runs it")
	}
	// Small exchanges keep the file short: scanning every cut is quadratic.
	all := sampleExchanges(t)
	cf := writeCrawlFile(t, []*Exchange{all[0], all[3], all[5], all[6], all[7]})
	size := int64(len(cf.data))
	last := cf.locs[len(cf.locs)-1].Offset
	var boundaries []int64 // end of every member
	for i, loc := range cf.locs {
		boundaries = append(boundaries, loc.Offset, loc.Offset+loc.Length, cf.ends[i])
	}
	onDisk := func(cut int64) bool {
		return cut >= last || cut%101 == 0 || slices.Contains(boundaries, cut) || slices.Contains(boundaries, cut+1) || slices.Contains(boundaries, cut-1)
	}
	var (
		mu           sync.Mutex
		readBackDone = map[int]bool{} // by Kept
	)
	// Workers share out the cuts: Recover's fsyncs dominate the time. They
	// report with t.Errorf and stop at their first failure.
	const workers = 8
	var wg sync.WaitGroup
	for w := range int64(workers) {
		wg.Go(func() {
			for cut := w; cut <= size; cut += workers {
				plan, err := scan(bytes.NewReader(cf.data[:cut]))
				n, keep := cf.want(cut)
				if n == 0 {
					keep = plan.keep // only warcinfo (kept bytes unused) or nothing
				}
				if err != nil || plan.exchanges != n || plan.keep != keep || !slices.Equal(plan.uris, cf.urls[:n]) {
					t.Errorf("scan(cut %d) = %d exchanges, keep %d, %q, %v; want %d, %d, %q", cut, plan.exchanges, plan.keep, plan.uris, err, n, keep, cf.urls[:n])
					return
				}
				if !onDisk(cut) {
					continue
				}
				if !recoverCut(t, &cf, cut, &mu, readBackDone) {
					return
				}
			}
		})
	}
	wg.Wait()
}

// recoverCut runs Recover on the first cut bytes of cf in a directory of
// their own and checks the result. Every recovered file is one of a few
// prefixes of cf.data (checkRecovered checks the bytes), so gowarc reads
// each back once; done records which, by Kept. mu guards done and the
// read: gowarc's reader writes a global of github.com/google/uuid. It
// reports with t.Errorf (it runs on workers) and returns false on failure.
func recoverCut(t *testing.T, cf *crawlFile, cut int64, mu *sync.Mutex, done map[int]bool) bool {
	dir, err := os.MkdirTemp(t.TempDir(), "cut")
	if err != nil {
		t.Error(err)
		return false
	}
	if err := os.WriteFile(filepath.Join(dir, cf.name+OpenSuffix), cf.data[:cut], 0o644); err != nil {
		t.Error(err)
		return false
	}
	got, err := Recover(dir)
	if err != nil {
		t.Errorf("cut %d: Recover: %v", cut, err)
		return false
	}
	if err := checkRecovered(cf, dir, cut, got); err != nil {
		t.Error(err)
		return false
	}
	if got[0].File == "" {
		return true
	}
	mu.Lock()
	defer mu.Unlock()
	if done[got[0].Kept] {
		return true
	}
	done[got[0].Kept] = true
	gowarcMu.Lock()
	defer gowarcMu.Unlock()
	n, err := countRecords(got[0].File)
	if err != nil || n != got[0].Kept {
		t.Errorf("cut %d: gowarc read %d records (%v), want %d", cut, n, err, got[0].Kept)
		return false
	}
	return true
}

// TestRecoverValidated has warcio read files recovered from cuts spread
// over a file, half of them in its last exchange. Each cut is made in a
// file of its own, since warcio rejects a record ID seen twice.
func TestRecoverValidated(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: warcio reads every recovered file; the full suite runs it")
	}
	exs := sampleExchanges(t)
	rng := rand.New(rand.NewPCG(3, 4))
	valDir := t.TempDir()
	var files []string
	want := map[string][]string{}
	for i := 0; i < 24; i++ {
		cf := writeCrawlFile(t, exs)
		size := int64(len(cf.data))
		last := cf.locs[len(cf.locs)-1].Offset
		var cut int64
		switch {
		case i == 0:
			cut = size
		case i == 1:
			cut = last
		case i%2 == 0:
			cut = cf.infoEnd + rng.Int64N(size-cf.infoEnd)
		default:
			cut = last + rng.Int64N(size-last)
		}
		dir := t.TempDir()
		putOpen(t, dir, cf.name, cf.data[:cut])
		got, err := Recover(dir)
		if err != nil {
			t.Fatalf("cut %d: Recover: %v", cut, err)
		}
		if err := checkRecovered(&cf, dir, cut, got); err != nil {
			t.Fatal(err)
		}
		if got[0].File == "" {
			continue
		}
		p := filepath.Join(valDir, fmt.Sprintf("cut%02d-%06d.warc.gz", i, cut))
		if err := os.Rename(got[0].File, p); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
		want[p] = got[0].URIs
	}
	if len(files) < 20 {
		t.Fatalf("only %d files to validate", len(files))
	}
	rep := validate(t, files...)
	gotURIs := map[string][]string{}
	for _, r := range rep.Responses {
		gotURIs[r.File] = append(gotURIs[r.File], r.URI)
	}
	for _, p := range files {
		if !slices.Equal(gotURIs[p], want[p]) {
			t.Errorf("warcio read responses %q from %s, want %q", gotURIs[p], filepath.Base(p), want[p])
		}
	}
}

// TestRecoverBoundaries checks the member boundaries Recover finds against
// the Locations the Writer returned, with a reader that hands out one byte
// at a time as well, and with members compressed in other ways (stored
// blocks, Huffman only, a file name in the gzip header).
func TestRecoverBoundaries(t *testing.T) {
	cf := writeCrawlFile(t, sampleExchanges(t))
	want := []int64{cf.infoEnd}
	for i, loc := range cf.locs {
		want = append(want, loc.Offset+loc.Length, cf.ends[i])
	}

	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"file", bytes.NewReader(cf.data)},
		{"one byte at a time", iotest.OneByteReader(bytes.NewReader(cf.data))},
		{"half reads", iotest.HalfReader(bytes.NewReader(cf.data))},
	} {
		plan, err := scan(tc.r)
		if err != nil {
			t.Fatalf("%s: scan: %v", tc.name, err)
		}
		if !slices.Equal(plan.ends, want) {
			t.Errorf("%s: member ends %v, want %v", tc.name, plan.ends, want)
		}
	}

	// Re-encode every member in other ways.
	levels := []int{gzip.NoCompression, gzip.HuffmanOnly, gzip.BestSpeed, gzip.BestCompression}
	var data []byte
	want = nil
	for i, m := range cf.members() {
		data = append(data, gzipMember(t, gunzip(t, m), levels[i%len(levels)], fmt.Sprintf("member-%d", i))...)
		want = append(want, int64(len(data)))
	}
	plan, err := scan(iotest.OneByteReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatalf("re-encoded: scan: %v", err)
	}
	if !slices.Equal(plan.ends, want) || plan.keep != int64(len(data)) || !slices.Equal(plan.uris, cf.urls) {
		t.Errorf("re-encoded: member ends %v, keep %d, uris %q; want %v, %d, %q", plan.ends, plan.keep, plan.uris, want, len(data), cf.urls)
	}
}

// flip returns a copy of b with the byte at i inverted.
func flip(b []byte, i int64) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0xff
	return c
}

func TestRecoverDamage(t *testing.T) {
	cf := writeCrawlFile(t, sampleExchanges(t)[:4])
	m := cf.members() // 0 warcinfo, 1 resp#1, 2 req#1, 3 resp#2, ...
	size := int64(len(cf.data))
	garbage := make([]byte, 777)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	garbage[0] = 0x1f // looks like the start of a gzip member
	badLength := gzipMember(t, bytes.Replace(gunzip(t, m[3]), []byte("Content-Length: "), []byte("Content-Length: 1"), 1), gzip.DefaultCompression, "")
	extraRecord := gzipMember(t, cat(gunzip(t, m[3]), gunzip(t, m[4])), gzip.DefaultCompression, "")
	badDigest := gzipMember(t, bytes.Replace(gunzip(t, m[3]), []byte("octet-stream"), []byte("OCTET-stream"), 1), gzip.DefaultCompression, "")
	tests := []struct {
		name      string
		data      []byte
		exchanges int    // whole exchanges kept; 0: file removed
		keep      int64  // bytes kept when exchanges > 0
		err       string // if not "": Recover fails with this, naming the file and offset
		offset    int64
	}{
		{"intact", cf.data, 4, size, "", 0},
		{"garbage after a member", cat(cf.data, garbage), 4, size, "", 0},
		{"partial member then garbage", cat(cf.data, m[1][:len(m[1])/2], garbage), 4, size, "", 0},
		{"zeros after a member", cat(cf.data, make([]byte, 4096)), 4, size, "", 0},
		{"response without request", cat(cf.data, m[1]), 4, size, "", 0},
		{"response and half a request", cat(cf.data, m[1], m[2][:len(m[2])-1]), 4, size, "", 0},
		{"bad CRC in last request", flip(cf.data, size-5), 3, cf.ends[2], "", 0},
		{"bad length in last request", flip(cf.data, size-1), 3, cf.ends[2], "", 0},
		{"corrupt data in second response", flip(cf.data, cf.locs[1].Offset+30), 1, cf.ends[0], "", 0},
		{"Content-Length wrong", cat(m[0], m[1], m[2], badLength, m[4]), 1, cf.ends[0], "", 0},
		{"two records in a member", cat(m[0], m[1], m[2], extraRecord), 1, cf.ends[0], "", 0},
		{"block digest wrong", cat(m[0], m[1], m[2], badDigest, m[4]), 1, cf.ends[0], "", 0},
		{"zero-length", nil, 0, 0, "", 0},
		{"all zeros", make([]byte, 8192), 0, 0, "", 0},
		{"only warcinfo", m[0], 0, 0, "", 0},
		{"warcinfo cut", m[0][:len(m[0])-3], 0, 0, "", 0},
		{"gzip header cut", m[0][:2], 0, 0, "", 0},
		{"warcinfo then garbage", cat(m[0], garbage), 0, 0, "", 0},

		{"text", []byte("this is not a WARC file\n"), 0, 0, "not a gzip file", 0},
		{"short text", []byte("hi"), 0, 0, "not a gzip file", 0},
		{"zeros then data", cat(make([]byte, 100), []byte("x")), 0, 0, "not a gzip file", 0},
		// A power cut can lose the first block of a file and keep a later one.
		{"zero block then members", cat(make([]byte, 4096), cf.data[4096:]), 0, 0, "", 0},
		{"gzip of text", gzipMember(t, []byte("hello\r\n"), gzip.DefaultCompression, ""), 0, 0, "not a WARC record", 0},
		{"gzip of text cut", gzipMember(t, []byte("hello, world, not a WARC record"), gzip.NoCompression, "")[:30], 0, 0, "unreadable", 0},
		{"warcinfo with bad CRC", cat(flip(m[0], int64(len(m[0])-6)), m[1], m[2]), 0, 0, "unreadable", 0},
		{"first record a response", cat(m[1], m[2]), 0, 0, `"response", want warcinfo`, 0},
		{"request first", cat(m[0], m[2], m[1]), 0, 0, `"request" record where a response`, cf.infoEnd},
		{"two responses", cat(m[0], m[1], m[3], m[4]), 0, 0, `"response" record where the request`, int64(len(m[0]) + len(m[1]))},
		{"request of another response", cat(m[0], m[1], m[4]), 0, 0, "does not name the response", int64(len(m[0]) + len(m[1]))},
		{"second warcinfo", cat(m[0], m[1], m[2], m[0], m[3], m[4]), 0, 0, `"warcinfo" record where a response`, cf.ends[0]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := putOpen(t, dir, cf.name, tt.data)
			got, err := Recover(dir)
			if tt.err != "" {
				want := fmt.Sprintf("%s: offset %d: ", path, tt.offset)
				if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Recover(%s) = %+v, %v; want an error with %q and %q", tt.name, got, err, want, tt.err)
				}
				if len(got) != 0 {
					t.Errorf("Recover(%s) = %+v, want no file", tt.name, got)
				}
				if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, tt.data) {
					t.Errorf("%s: file changed (%d bytes, %v), want it left as is", tt.name, len(b), err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Recover(%s): %v", tt.name, err)
			}
			if len(got) != 1 {
				t.Fatalf("Recover(%s) = %+v, want one file", tt.name, got)
			}
			r := got[0]
			if tt.exchanges == 0 {
				if r.File != "" || r.Kept != 0 || r.CutBytes != int64(len(tt.data)) {
					t.Errorf("Recover(%s) = %+v, want the file removed", tt.name, r)
				}
				if names := dirNames(t, dir); len(names) != 0 {
					t.Errorf("%s: directory holds %q, want nothing", tt.name, names)
				}
				return
			}
			want := Recovered{File: filepath.Join(dir, cf.name), Kept: 1 + 2*tt.exchanges, CutBytes: int64(len(tt.data)) - tt.keep, URIs: cf.urls[:tt.exchanges]}
			if r.File != want.File || r.Kept != want.Kept || r.CutBytes != want.CutBytes || !slices.Equal(r.URIs, want.URIs) {
				t.Errorf("Recover(%s) = %+v, want %+v", tt.name, r, want)
			}
			b, err := os.ReadFile(r.File)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, tt.data[:tt.keep]) {
				t.Errorf("%s: recovered file is %d bytes, want the first %d of the damaged one", tt.name, len(b), tt.keep)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{cf.name}) {
				t.Errorf("%s: directory holds %q, want %q", tt.name, names, cf.name)
			}
			if recs := readBack(t, r.File); len(recs) != r.Kept {
				t.Errorf("%s: gowarc read %d records, want %d", tt.name, len(recs), r.Kept)
			}
		})
	}
}

// TestRecoverDir checks the choice of files, carrying on after a bad one,
// and a missing directory.
func TestRecoverDir(t *testing.T) {
	cf := writeCrawlFile(t, sampleExchanges(t)[:2])
	dir := t.TempDir()
	files := map[string][]byte{
		"a.warc.gz":           cf.data, // finished: not touched
		"b.warc.gz.open":      []byte("foreign"),
		"c.warc.gz.open":      cat(cf.data, []byte{0x1f, 0x8b}),
		"d.open":              []byte("not ours"),
		"e.warc.open":         cf.data,
		"f.warc.gz.open":      nil,
		"g.warc.gz.open.keep": cf.data,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "h.warc.gz.open"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Recover(dir)
	if err == nil || !strings.Contains(err.Error(), "b.warc.gz.open: offset 0: not a gzip file") || !strings.Contains(err.Error(), "h.warc.gz.open: not a regular file") {
		t.Errorf("Recover(dir) error = %v, want errors naming b.warc.gz.open and h.warc.gz.open", err)
	}
	want := []Recovered{
		{File: filepath.Join(dir, "c.warc.gz"), Kept: 5, CutBytes: 2, URIs: cf.urls},
		{File: "", CutBytes: 0},
	}
	if len(got) != len(want) {
		t.Fatalf("Recover(dir) = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].File != want[i].File || got[i].Kept != want[i].Kept || got[i].CutBytes != want[i].CutBytes || !slices.Equal(got[i].URIs, want[i].URIs) {
			t.Errorf("Recover(dir)[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	wantNames := []string{"a.warc.gz", "b.warc.gz.open", "c.warc.gz", "d.open", "e.warc.open", "g.warc.gz.open.keep", "h.warc.gz.open"}
	if names := dirNames(t, dir); !slices.Equal(names, wantNames) {
		t.Errorf("directory holds %q, want %q", names, wantNames)
	}
	for name, b := range files {
		if name == "c.warc.gz.open" || name == "f.warc.gz.open" {
			continue
		}
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s changed: %d bytes, %v", name, len(got), err)
		}
	}

	if got, err := Recover(filepath.Join(dir, "missing")); err != nil || got != nil {
		t.Errorf("Recover(missing dir) = %+v, %v; want nothing", got, err)
	}
}

// TestRecoverFinishedNameTaken leaves a file alone when its finished name is
// already there.
func TestRecoverFinishedNameTaken(t *testing.T) {
	cf := writeCrawlFile(t, sampleExchanges(t)[:1])
	dir := t.TempDir()
	path := putOpen(t, dir, cf.name, cat(cf.data, []byte("xx")))
	if err := os.WriteFile(filepath.Join(dir, cf.name), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Recover(dir)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Recover = %+v, %v; want an error naming %s", got, err, path)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, cat(cf.data, []byte("xx"))) {
		t.Errorf("%s changed: %d bytes, %v", path, len(b), err)
	}
}

// TestRecoverThenWrite recovers a file cut in its last exchange, then lets a
// new Writer carry on in the same directory.
func TestRecoverThenWrite(t *testing.T) {
	exs := sampleExchanges(t)
	cf := writeCrawlFile(t, exs[:3])
	dir := t.TempDir()
	putOpen(t, dir, cf.name, cf.data[:len(cf.data)-10])
	got, err := Recover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !slices.Equal(got[0].URIs, cf.urls[:2]) {
		t.Fatalf("Recover = %+v, want the first two exchanges", got)
	}
	w := newTestWriter(t, Options{Dir: dir})
	if _, err := w.Write(exs[2]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := []string{got[0].File, w.Files()[0]}
	if files[0] == files[1] {
		t.Fatalf("the new Writer wrote to the recovered file %s", files[0])
	}
	rep := validate(t, files...)
	var uris []string
	for _, r := range rep.Responses {
		uris = append(uris, r.URI)
	}
	if !slices.Equal(uris, cf.urls) {
		t.Errorf("responses %q, want %q", uris, cf.urls)
	}
}

// FuzzRecover recovers arbitrary bytes left as an open file: no panic; on
// success no open file remains, what remains is a prefix of the input, and
// reading it again keeps all of it; on failure the file is untouched.
func FuzzRecover(f *testing.F) {
	cf := writeCrawlFile(f, sampleExchanges(f)[:3])
	m := cf.members()
	f.Add(cf.data)
	f.Add(cf.data[:len(cf.data)-7])
	f.Add(cat(m[0], m[1]))
	f.Add(cat(m[0], m[2], m[1]))
	f.Add(cat(m[0], []byte{0x1f, 0x8b, 0x08, 0, 0}))
	f.Add(m[0][:20])
	f.Add([]byte("WARC/1.1\r\n\r\n"))
	f.Add([]byte{})
	f.Add(make([]byte, 10))
	f.Add(gzipMember(f, []byte("WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <x>\r\nContent-Length: 0\r\n\r\n\r\n\r\n"), gzip.NoCompression, ""))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		const name = "fuzz.warc.gz"
		path := putOpen(t, dir, name, data)
		got, err := Recover(dir)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Errorf("Recover error %q does not name %s", err, path)
			}
			if b, rerr := os.ReadFile(path); rerr != nil || !bytes.Equal(b, data) {
				t.Errorf("Recover failed (%v) and changed the file: %d bytes, %v", err, len(b), rerr)
			}
			return
		}
		if len(got) != 1 {
			t.Fatalf("Recover = %+v, want one file", got)
		}
		r := got[0]
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("Recover returned nil and left %s (%v)", path, err)
		}
		if r.File == "" {
			if names := dirNames(t, dir); len(names) != 0 || r.CutBytes != int64(len(data)) || r.Kept != 0 {
				t.Errorf("Recover = %+v, directory holds %q; want the file removed", r, names)
			}
			return
		}
		b, err := os.ReadFile(r.File)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != int64(len(data))-r.CutBytes || !bytes.Equal(b, data[:len(b)]) {
			t.Fatalf("recovered file (%d bytes, %d cut) is not a prefix of the input (%d bytes)", len(b), r.CutBytes, len(data))
		}
		if r.Kept != 1+2*len(r.URIs) {
			t.Errorf("Kept = %d with %d URIs, want 1+2*URIs", r.Kept, len(r.URIs))
		}
		// Reading the result again keeps everything (scan is what Recover
		// reads with; in memory, it spares the fsyncs).
		plan, err := scan(bytes.NewReader(b))
		if err != nil || plan.keep != int64(len(b)) || 1+2*plan.exchanges != r.Kept || !slices.Equal(plan.uris, r.URIs) {
			t.Errorf("scan(recovered file) = keep %d of %d, %d exchanges, %q, %v; want all of %+v", plan.keep, len(b), plan.exchanges, plan.uris, err, r)
		}
	})
}

// TestRecoverReadError checks that a failing read is reported with the
// offset of the member being read, never taken for damage to cut.
func TestRecoverReadError(t *testing.T) {
	cf := writeCrawlFile(t, sampleExchanges(t)[:3])
	boom := errors.New("boom")
	for _, n := range []int64{0, 1, cf.infoEnd - 1, cf.infoEnd + 5, cf.ends[1] + 1} {
		plan, err := scan(io.MultiReader(bytes.NewReader(cf.data[:n]), iotest.ErrReader(boom)))
		var se *scanError
		if !errors.Is(err, boom) || !errors.As(err, &se) {
			t.Errorf("scan(fails after %d bytes) = %+v, %v; want the read error", n, plan, err)
			continue
		}
		// The error comes from the member that starts at or before n.
		want := int64(0)
		for _, start := range cf.memberStarts() {
			if start <= n {
				want = start
			}
		}
		if se.offset != want || !strings.Contains(err.Error(), fmt.Sprintf("offset %d: read: boom", want)) {
			t.Errorf("scan(fails after %d bytes) = %v, want offset %d", n, err, want)
		}
	}
}

// TestParseRecordDigests checks block digests by algorithm: sha256 (what
// the writer writes) and sha1 (files written before it), base32 or hex,
// must match; other algorithms are not checked.
func TestParseRecordDigests(t *testing.T) {
	block := "hello, block"
	s1, s256 := sha1.Sum([]byte(block)), sha256.Sum256([]byte(block))
	rec := func(digest string) string {
		return "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:x>\r\nWARC-Block-Digest: " + digest +
			"\r\nContent-Length: " + strconv.Itoa(len(block)) + "\r\n\r\n" + block + "\r\n\r\n"
	}
	for _, c := range []struct {
		digest string
		ok     bool
	}{
		{"sha256:" + base32.StdEncoding.EncodeToString(s256[:]), true},
		{"SHA256:" + hex.EncodeToString(s256[:]), true},
		{"sha1:" + base32.StdEncoding.EncodeToString(s1[:]), true},
		{"sha1:" + hex.EncodeToString(s1[:]), true},
		{"md5:whatever", true},
		{"sha256", true},                                                                       // no value: nothing to check
		{"sha256:" + strings.TrimRight(base32.StdEncoding.EncodeToString(s256[:]), "="), true}, // unpadded
		{"sha256:" + base32.StdEncoding.EncodeToString(s1[:]), false},
		{"sha1:" + base32.StdEncoding.EncodeToString(s256[:]), false},
		{"sha256:nonsense", false},
	} {
		var hs blockHashes
		_, err := parseRecord(bufio.NewReader(strings.NewReader(rec(c.digest))), &hs)
		if (err == nil) != c.ok {
			t.Errorf("parseRecord with WARC-Block-Digest %q: err = %v, want ok %v", c.digest, err, c.ok)
		}
	}
}
