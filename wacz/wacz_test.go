package wacz

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/warc"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if crawled.dir != "" {
		os.RemoveAll(crawled.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// crawled is a crawl of a small synthetic web shared by the tests: two
// jobs (the second seeded with one of the first's seeds, after it) on one
// data directory, with small WARC files so that it has several.
var crawled struct {
	once  sync.Once
	dir   string
	seeds []string
	jobs  [2]job.ID
	err   error
}

func crawl(t *testing.T) string {
	t.Helper()
	crawled.once.Do(func() { crawled.err = runCrawl() })
	if crawled.err != nil {
		t.Fatal(crawled.err)
	}
	return crawled.dir
}

func runCrawl() error {
	web := testweb.Options{Seed: 5, Hosts: 6}.SmallPages()
	srv, err := testweb.Serve(testweb.Generate(web), testweb.ServeOptions{})
	if err != nil {
		return err
	}
	defer srv.Close()
	dir, err := os.MkdirTemp("", "wacz-test-")
	if err != nil {
		return err
	}
	crawled.dir = dir
	n, err := node.Open(node.Options{
		DataDir: dir, MinDelay: 2 * time.Millisecond, MaxAdaptiveDelay: 20 * time.Millisecond,
		Concurrency: 16, AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Hosts: srv.Resolver(), WARCMaxSize: 64 << 10,
	})
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			n.Close()
		}
	}()
	seeds := srv.Seeds()
	crawled.seeds = seeds
	n.Start()
	// The second crawl starts once the first has ended, so that it fetches
	// its pages again (a crawl takes another's fetches only from its own
	// creation on); -short runs the first only.
	specs := [][]string{seeds, seeds[:1]}
	if testing.Short() {
		specs = specs[:1]
	}
	for i, s := range specs {
		j, err := n.Submit(job.Spec{Name: []string{"all", "one"}[i], Seeds: s, Domains: []string{srv.Web().Options().Domain},
			MaxDepth: 3, RobotsGiveUp: 2 * time.Second})
		if err != nil {
			return err
		}
		crawled.jobs[i] = j.ID
		select {
		case <-j.Ended():
		case <-time.After(2 * time.Minute):
			return fmt.Errorf("crawl %q did not end in 2 minutes", j.Spec.Name)
		}
		if err := j.Err(); err != nil {
			return err
		}
	}
	closed = true
	if err := n.Close(); err != nil {
		return err
	}
	return nil
}

// waczFile is a written WACZ, opened.
type waczFile struct {
	path    string
	zr      *zip.ReadCloser
	entries map[string]*zip.File
}

func export(t *testing.T, o Options) (waczFile, Result) {
	t.Helper()
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.wacz")
	res, err := e.WriteFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("archive/zip cannot open the WACZ: %v", err)
	}
	t.Cleanup(func() { zr.Close() })
	w := waczFile{path: path, zr: zr, entries: map[string]*zip.File{}}
	for _, f := range zr.File {
		if w.entries[f.Name] != nil {
			t.Errorf("entry %s twice", f.Name)
		}
		w.entries[f.Name] = f
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != res.Bytes {
		t.Errorf("Result.Bytes = %d, the file has %v (%v)", res.Bytes, fi.Size(), err)
	}
	return w, res
}

func (w waczFile) read(t *testing.T, name string) []byte {
	t.Helper()
	f := w.entries[name]
	if f == nil {
		t.Fatalf("the WACZ has no %s", name)
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

// logged is what the crawl log says of the crawl (of job, if not 0): the
// records of HTML 200 responses (revisits too) by location, and every
// record's location.
func logged(t *testing.T, data string, id job.ID) (pages map[string]string, records map[string]bool) {
	t.Helper()
	pages, records = map[string]string{}, map[string]bool{}
	err := crawllog.Scan(filepath.Join(data, "logs"), crawllog.Filter{Job: uint32(id)}, func(e crawllog.Entry) error {
		if e.WARC == "" {
			return nil
		}
		loc := e.WARC + "@" + itoa(e.Offset)
		records[loc] = true
		if !e.Robots && e.Status == 200 && e.MIME == "text/html" {
			pages[loc] = e.URL
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages, records
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestExport exports the whole data directory and one crawl of it, and
// checks each WACZ as a replay tool would read it.
func TestExport(t *testing.T) {
	data := crawl(t)
	warcs, _ := filepath.Glob(filepath.Join(data, "warc", "*"+warc.Extension))
	if len(warcs) < 2 {
		t.Fatalf("the crawl wrote %d WARC files, want several", len(warcs))
	}
	for _, c := range []struct {
		name string
		job  job.ID
	}{
		{"everything", 0},
		{"crawl 2", crawled.jobs[1]},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "crawl 2" && testing.Short() {
				t.Skip("-short: one crawl only; the full suite exports the second")
			}
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			w, res := export(t, Options{Data: data, Job: uint32(c.job), Now: func() time.Time { return now }})
			wantPages, records := logged(t, data, c.job)
			checkEntries(t, w, data, c.job == 0)
			checkPackage(t, w, now)
			lines := checkIndex(t, w)
			pages := checkPages(t, w, data, lines)
			if res.Captures != len(lines) || res.Pages != len(pages) {
				t.Errorf("Result says %d captures, %d pages; the WACZ has %d, %d", res.Captures, res.Pages, len(lines), len(pages))
			}
			// Every HTML 200 capture of the crawl is a page, and only those.
			got := map[string]string{}
			for _, p := range pages {
				got[p.loc] = p.URL
			}
			for loc, u := range wantPages {
				if got[loc] != u {
					t.Errorf("the log's HTML 200 capture %s (%s) is no page", u, loc)
				}
			}
			for loc, u := range got {
				if wantPages[loc] == "" {
					t.Errorf("page %s (%s) is no HTML 200 capture of the crawl's log", u, loc)
				}
			}
			// With a job, every index line is one of its records.
			if c.job != 0 {
				for _, l := range lines {
					if !records[l.Filename+"@"+itoa(l.Offset)] {
						t.Errorf("index line of %s (%s@%d) is no record of crawl %d", l.URL, l.Filename, l.Offset, c.job)
					}
				}
			}
			if len(pages) < 5 {
				t.Errorf("%d pages, want a crawl's worth", len(pages))
			}
			t.Logf("%d WARC files, %d captures, %d pages, %d bytes", res.WARCFiles, res.Captures, res.Pages, res.Bytes)
		})
	}
}

// checkEntries: every WARC file is under archive/, stored, byte for byte
// (all of the data directory's when all is set); nothing else is there.
func checkEntries(t *testing.T, w waczFile, data string, all bool) {
	t.Helper()
	n := 0
	for name, f := range w.entries {
		base, ok := strings.CutPrefix(name, ArchiveDir)
		if !ok {
			continue
		}
		n++
		if f.Method != zip.Store {
			t.Errorf("%s: method %d, want Store (%d)", name, f.Method, zip.Store)
		}
		want, err := os.ReadFile(filepath.Join(data, "warc", base))
		if err != nil {
			t.Errorf("%s: no such WARC file in the data directory: %v", name, err)
			continue
		}
		if got := w.read(t, name); !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, not the WARC file's %d", name, len(got), len(want))
		}
	}
	if all {
		files, _ := filepath.Glob(filepath.Join(data, "warc", "*"+warc.Extension))
		if n != len(files) {
			t.Errorf("%d WARC entries, the data directory has %d files", n, len(files))
		}
	}
	for _, name := range []string{IndexPath, PagesPath, PackagePath, DigestPath} {
		if w.entries[name] == nil {
			t.Errorf("no %s", name)
		}
	}
}

// checkPackage: datapackage.json's fields, and each resource's hash and
// size are its entry's; datapackage-digest.json's hash is the manifest's.
func checkPackage(t *testing.T, w waczFile, now time.Time) {
	t.Helper()
	raw := w.read(t, PackagePath)
	var dp struct {
		Profile     string `json:"profile"`
		WACZVersion string `json:"wacz_version"`
		Created     string `json:"created"`
		Software    string `json:"software"`
		Title       string `json:"title"`
		MainPageURL string `json:"mainPageUrl"`
		Resources   []struct {
			Name  string `json:"name"`
			Path  string `json:"path"`
			Hash  string `json:"hash"`
			Bytes int64  `json:"bytes"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &dp); err != nil {
		t.Fatalf("datapackage.json: %v", err)
	}
	if dp.Profile != "data-package" || dp.WACZVersion != "1.1.1" || dp.Software == "" || dp.Title == "" {
		t.Errorf("datapackage.json: profile %q, wacz_version %q, software %q, title %q", dp.Profile, dp.WACZVersion, dp.Software, dp.Title)
	}
	if c, err := time.Parse(time.RFC3339, dp.Created); err != nil || !c.Equal(now) {
		t.Errorf("created %q (%v), want %v", dp.Created, err, now)
	}
	if dp.MainPageURL == "" {
		t.Error("no mainPageUrl, though the crawl fetched seed pages")
	}
	listed := map[string]bool{}
	for _, r := range dp.Resources {
		if listed[r.Path] {
			t.Errorf("resource %s twice", r.Path)
		}
		listed[r.Path] = true
		if r.Name != filepath.Base(r.Path) {
			t.Errorf("resource %s named %q", r.Path, r.Name)
		}
		if w.entries[r.Path] == nil {
			t.Errorf("resource %s is no entry", r.Path)
			continue
		}
		b := w.read(t, r.Path)
		sum := sha256.Sum256(b)
		if want := "sha256:" + hex.EncodeToString(sum[:]); r.Hash != want || r.Bytes != int64(len(b)) {
			t.Errorf("resource %s: hash %s, %d bytes; the entry's: %s, %d", r.Path, r.Hash, r.Bytes, want, len(b))
		}
	}
	for name := range w.entries {
		if !listed[name] && name != PackagePath && name != DigestPath {
			t.Errorf("entry %s is not among the resources", name)
		}
	}
	var d struct{ Path, Hash string }
	if err := json.Unmarshal(w.read(t, DigestPath), &d); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if d.Path != PackagePath || d.Hash != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("datapackage-digest.json = %+v, want datapackage.json's sha256", d)
	}
}

// checkIndex: the index is sorted, and each line's offset and length,
// read from the WACZ file itself at its WARC entry's data offset, are one
// whole gzip member holding the record of the line's URL.
func checkIndex(t *testing.T, w waczFile) []cdxj.Line {
	t.Helper()
	text := strings.TrimSuffix(string(w.read(t, IndexPath)), "\n")
	texts := strings.Split(text, "\n")
	if !slices.IsSorted(texts) {
		t.Error("indexes/index.cdxj is not sorted")
	}
	raw, err := os.Open(w.path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var lines []cdxj.Line
	for _, s := range texts {
		l, err := cdxj.ParseLine(s)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
		f := w.entries[ArchiveDir+l.Filename]
		if f == nil {
			t.Errorf("line %s: no entry %s%s", l.URL, ArchiveDir, l.Filename)
			continue
		}
		at, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		rd := warc.NewReader(io.NewSectionReader(raw, at+l.Offset, l.Length), l.Filename)
		rec, err := rd.Next()
		if err != nil {
			t.Errorf("line %s: no record at %s@%d in the WACZ: %v", l.URL, l.Filename, l.Offset, err)
			continue
		}
		n, err := rd.End()
		if err != nil || n != l.Length || rec.TargetURI != l.URL {
			t.Errorf("line %s: %s@%d holds a record of %s, member of %d bytes (%v), want %d", l.URL, l.Filename, l.Offset, rec.TargetURI, n, err, l.Length)
		}
		if _, err := rd.Next(); err != io.EOF {
			t.Errorf("line %s: the length %d runs past its record (%v)", l.URL, l.Length, err)
		}
	}
	return lines
}

type pageLine struct {
	ID    string `json:"id"`
	URL   string `json:"url"`
	TS    string `json:"ts"`
	Title string `json:"title"`
	Seed  bool   `json:"seed"`
	loc   string
}

var titleRE = regexp.MustCompile(`(?is)<title>(.*?)</title>`)

// checkPages: pages.jsonl's header, each page's fields, that it is an
// HTML 200 capture in the index, its title as its archived payload says,
// and its seed mark.
func checkPages(t *testing.T, w waczFile, data string, lines []cdxj.Line) []pageLine {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(w.read(t, PagesPath)))
	if !sc.Scan() || sc.Text() != PagesHeader {
		t.Fatalf("pages.jsonl starts %q, want %q", sc.Text(), PagesHeader)
	}
	byURLTime := map[string]cdxj.Line{}
	for _, l := range lines {
		byURLTime[l.URL+" "+l.Timestamp] = l
	}
	seeds := map[string]bool{}
	for _, s := range crawled.seeds {
		seeds[s] = true
	}
	var pages []pageLine
	titled, seeded, responses := 0, 0, 0
	for sc.Scan() {
		var p pageLine
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("pages.jsonl: %v: %s", err, sc.Text())
		}
		ts, err := time.Parse(time.RFC3339, p.TS)
		if err != nil || p.URL == "" || p.ID == "" {
			t.Errorf("page %s: ts %q (%v), id %q", p.URL, p.TS, err, p.ID)
			continue
		}
		l, ok := byURLTime[p.URL+" "+ts.Format("20060102150405")]
		if !ok || l.Status != "200" || l.Mime != "text/html" && l.Mime != "warc/revisit" {
			t.Errorf("page %s at %s: no HTML 200 line in the index (%+v)", p.URL, p.TS, l)
			continue
		}
		p.loc = l.Filename + "@" + itoa(l.Offset)
		if l.Mime == "text/html" {
			responses++
		}
		if want := archivedTitle(t, filepath.Join(data, "warc", l.Filename), l); p.Title != want {
			t.Errorf("page %s: title %q, its payload says %q", p.URL, p.Title, want)
		}
		if p.Title != "" {
			titled++
		}
		if p.Seed {
			seeded++
			if !seeds[p.URL] {
				t.Errorf("page %s is marked a seed; the seeds are %v", p.URL, crawled.seeds)
			}
		}
		pages = append(pages, p)
	}
	if titled == 0 && responses > 0 || seeded == 0 {
		t.Errorf("%d pages have a title (%d are responses, not revisits), %d are seeds; want some of each", titled, responses, seeded)
	}
	return pages
}

// archivedTitle reads l's record from the WARC file at path and returns
// its payload's <title>, by a regular expression.
func archivedTitle(t *testing.T, path string, l cdxj.Line) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := warc.NewReader(io.NewSectionReader(f, l.Offset, l.Length), path)
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rd.Block())
	if err != nil {
		t.Fatal(err)
	}
	m := titleRE.FindSubmatch(b)
	if m == nil {
		return ""
	}
	return strings.Join(strings.Fields(html.UnescapeString(string(m[1]))), " ")
}

// TestExportRefuses: what there is nothing to export from, or nowhere to
// write to, is a clear error, and no file is left behind.
func TestExportRefuses(t *testing.T) {
	empty := t.TempDir()
	withLogOnly := t.TempDir()
	os.MkdirAll(filepath.Join(withLogOnly, "warc"), 0o755)
	os.WriteFile(filepath.Join(withLogOnly, "warc", "trawl-1.warc.gz.open"), []byte("x"), 0o644)
	for _, c := range []struct {
		name string
		o    Options
		is   error
		want string
	}{
		{"empty data directory", Options{Data: empty}, ErrNoWARC, "no finished WARC file"},
		{"only a file being written", Options{Data: withLogOnly}, ErrNoWARC, "no finished WARC file"},
		{"missing data directory", Options{Data: filepath.Join(empty, "nope")}, nil, "no such file"},
		{"no data directory", Options{}, nil, "no data directory"},
		{"a crawl with no capture", Options{Data: empty, Job: 7}, ErrNoCaptures, "crawl 7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.o)
			if err == nil || (c.is != nil && !errors.Is(err, c.is)) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New(%+v) = %v, want an error saying %q", c.o, err, c.want)
			}
		})
	}

	t.Run("output in a missing directory", func(t *testing.T) {
		data := crawl(t)
		e, err := New(Options{Data: data})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "missing")
		out := filepath.Join(dir, "x.wacz")
		if _, err := e.WriteFile(out); err == nil || !strings.Contains(err.Error(), "missing") {
			t.Errorf("WriteFile(%s) = %v, want an error naming the directory", out, err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the missing directory was made (%v)", err)
		}
	})

	t.Run("a write that fails leaves no file", func(t *testing.T) {
		data := crawl(t)
		e, err := New(Options{Data: data})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Write(failWriter{}); err == nil {
			t.Error("Write to a writer that fails returned no error")
		}
	})
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

// TestExportWithoutIndex: a finished WARC file without its own index
// (a crash before it was written) is indexed in memory; the WACZ's index
// is the same as with every index there.
func TestExportWithoutIndex(t *testing.T) {
	data := crawl(t)
	copyDir := t.TempDir()
	if err := os.CopyFS(filepath.Join(copyDir, "warc"), os.DirFS(filepath.Join(data, "warc"))); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(copyDir, "warc", "*"+cdxj.IndexSuffix))
	if len(idx) == 0 {
		t.Fatal("no index to remove")
	}
	if err := os.Remove(idx[0]); err != nil {
		t.Fatal(err)
	}
	whole, _ := export(t, Options{Data: data})
	cut, _ := export(t, Options{Data: copyDir})
	if a, b := whole.read(t, IndexPath), cut.read(t, IndexPath); !bytes.Equal(a, b) {
		t.Errorf("without %s the index has %d bytes, with it %d", filepath.Base(idx[0]), len(b), len(a))
	}
}
