package node

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/testkit/nginxtest"
	"github.com/trawl-crawler/trawl/job"
)

// docTree is a tree of real HTML documentation that a Debian package
// installs, crawled from its index page (scripts/test.sh installs the
// packages for CI).
type docTree struct {
	name string // the generator, as the subtest's name
	pkg  string // the Debian package that installs it
	root string // the directory nginx serves
}

// docTrees are the generators of real documentation the near-duplicate
// gate must not mistake for copies: pages of one template, some with
// little text of their own (Sphinx's genindex-X pages, Doxygen's member
// lists, Javadoc's package frames). The first is the smallest, the one
// -short crawls.
var docTrees = []docTree{
	{"doxygen", "libjsoncpp-doc", "/usr/share/doc/libjsoncpp-doc"},
	{"sphinx", "python3.11-doc", "/usr/share/doc/python3.11/html"},
	{"javadoc", "junit4-doc", "/usr/share/doc/junit4/api"},
	// A second Doxygen tree, with member and function indexes whose text
	// is mostly links, and class pages of like classes.
	{"doxygen-box2d", "libbox2d-doc", "/usr/share/doc/libbox2d-dev/html"},
}

// docGap is the politeness gap of TestRealDocsNearDuplicates' crawls: one
// host of some 530 pages, so a gap of a few milliseconds keeps a crawl to
// seconds while the gap, not the whole machine, still paces it.
const docGap = 2 * time.Millisecond

// docMinPages is the fewest pages reachable from a tree's index for its
// crawl to say something: each of docTrees has more (Doxygen's 88 pages
// reachable by links, of 156: the others are linked only from the menu its
// script builds).
const docMinPages = 50

// docCrawlTimeout bounds one tree's crawl.
const docCrawlTimeout = 3 * time.Minute

// TestRealDocsNearDuplicates crawls real documentation trees (Sphinx,
// Doxygen, Javadoc), each served by nginx on loopback, from its index
// page to the end of the crawl with the default content gates, and
// judges the crawl log against the files themselves:
//
//   - coverage: every HTML page of the tree reachable by links from its
//     index (computed from the files, below, not from any crawl) was
//     fetched;
//   - no near-duplicate (or exact) flag between two pages whose visible
//     text differs. Two pages with the same visible text (Javadoc writes
//     the source of a nested class as a copy of its outer class's) may be
//     flagged.
//
// Every flag is logged with both URLs, either way; so is every page
// missed, with what became of the pages that link to it. A crawl with the
// near-duplicate gate off (NearResemblance -1) fetches exactly the reachable
// set of each tree, no page more or less (checked when this test was
// written), so a page missed is the gate's doing. Under -short only the
// smallest tree is crawled.
func TestRealDocsNearDuplicates(t *testing.T) {
	t.Parallel()
	trees := docTrees
	if testing.Short() {
		trees = trees[:1]
	}
	for _, tree := range trees {
		t.Run(tree.name, func(t *testing.T) {
			t.Parallel()
			crawlDocTree(t, tree)
		})
	}
}

func crawlDocTree(t *testing.T, tree docTree) {
	index := filepath.Join(tree.root, "index.html")
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("%s documentation missing (%v): install the Debian package %s (apt-get install -y --no-install-recommends %s; scripts/test.sh does; "+
			"if it is installed, dpkg may be told to leave /usr/share/doc out: path-exclude in /etc/dpkg/dpkg.cfg.d/)", tree.name, err, tree.pkg, tree.pkg)
	}
	reach, err := reachablePages(tree.root, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	srv := nginxtest.Start(t, tree.root)

	dir := t.TempDir()
	n, err := Open(Options{DataDir: dir, MinDelay: docGap, Concurrency: 4, AllowNets: loopback,
		// The adaptive term (ten times the last response time) would
		// otherwise stretch the gap of a loaded test machine to seconds.
		MaxAdaptiveDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	spec := job.Defaults()
	spec.Name = tree.name
	spec.Seeds = []string{srv.URL + "/index.html"}
	j, err := n.Submit(spec)
	if err != nil {
		n.Close()
		t.Fatal(err)
	}
	n.Start()
	ctx, cancel := context.WithTimeout(t.Context(), docCrawlTimeout)
	defer cancel()
	select {
	case <-j.Ended():
	case <-ctx.Done():
		t.Errorf("the crawl of %s did not end within %v", tree.name, docCrawlTimeout)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := j.Err(); err != nil {
		t.Fatalf("job: %v", err)
	}

	var entries []crawllog.Entry
	err = crawllog.Scan(filepath.Join(dir, logDir), crawllog.Filter{
		OnBad: func(file string, line int, err error) { t.Errorf("crawl log %s:%d: %v", file, line, err) },
	}, func(e crawllog.Entry) error {
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		t.Fatalf("read crawl log: %v", err)
	}

	// The pages fetched, as files of the tree, and the flags.
	file := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme+"://"+u.Host != srv.URL {
			return ""
		}
		return treeFile(tree.root, u.Path)
	}
	fetched := map[string]bool{}
	var flags []crawllog.Entry
	for _, e := range entries {
		if e.Dropped != "" || e.Robots || e.Status != 200 || e.MIME != "text/html" {
			continue
		}
		if f := file(e.URL); f != "" {
			fetched[f] = true
		}
		if e.Dedup == crawllog.DedupNear || e.Dedup == crawllog.DedupExact {
			flags = append(flags, e)
		}
	}

	var beyond []string
	for f := range fetched {
		if _, ok := reach.depth[f]; !ok {
			beyond = append(beyond, f)
		}
	}
	slices.Sort(beyond)
	for _, f := range beyond {
		t.Logf("fetched, though not reachable by the links this test follows: %s", f)
	}
	var missing []string
	for f := range reach.depth {
		if !fetched[f] {
			missing = append(missing, f)
		}
	}
	slices.Sort(missing)
	for _, f := range missing {
		// Why it was missed shows in its linkers' fates.
		var ls []string
		for _, l := range reach.linkers[f] {
			ls = append(ls, l+" ("+fate(entries, srv.URL, l)+")")
		}
		t.Logf("not fetched: %s, linked from %s", f, strings.Join(ls, ", "))
	}

	texts := map[string]string{}
	text := func(f string) string {
		if s, ok := texts[f]; ok {
			return s
		}
		b, err := os.ReadFile(filepath.Join(tree.root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = visibleText(b)
		return texts[f]
	}
	var near, differ, same int
	for _, e := range flags {
		a, b := file(e.URL), file(e.Original)
		verdict := "visible text identical"
		if a == "" || b == "" || text(a) != text(b) {
			verdict = "visible text DIFFERS"
			differ++
		} else {
			same++
		}
		if e.Dedup == crawllog.DedupNear {
			near++
		}
		t.Logf("%s: %s of %s: %s", e.Dedup, e.URL, e.Original, verdict)
	}
	t.Logf("%s: %d HTML files, %d pages reachable from the index (deepest at depth %d), %d fetched, %d missed; %d flags (%d near), %d between identical texts, %d between different texts",
		tree.name, htmlFiles(t, tree.root), len(reach.depth), reach.maxDepth, len(reach.depth)-len(missing), len(missing), len(flags), near, same, differ)
	if len(missing) > 0 {
		t.Errorf("coverage: %d of the %d pages reachable from the index not fetched", len(missing), len(reach.depth))
	}
	if differ > 0 {
		t.Errorf("%d pages flagged as duplicates of a page whose visible text differs", differ)
	}
	if len(reach.depth) < docMinPages {
		t.Errorf("only %d pages reachable from %s's index, want at least %d: is the tree whole?", len(reach.depth), tree.name, docMinPages)
	}
}

// htmlFiles counts the .html files under root.
func htmlFiles(t *testing.T, root string) int {
	count := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".html") {
			count++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return count
}

// fate says what the crawl log records of a tree file's URL: its dedup
// verdict, "fetched", or "not fetched".
func fate(entries []crawllog.Entry, base, f string) string {
	want := base + "/" + f
	for _, e := range entries {
		if e.URL == want && e.Status == 200 {
			if e.Dedup != "" {
				return e.Dedup + " of " + e.Original
			}
			return "fetched"
		}
	}
	return "not fetched"
}

// reach is the HTML pages of a tree reachable by links from its index.
type reach struct {
	depth    map[string]int      // page (path relative to the root, with /) → links from the index
	linkers  map[string][]string // page → the reachable pages that link to it
	maxDepth int
}

// treeFile maps a URL path on the server of root to the HTML file nginx
// answers it with (path relative to root, with /), or "" if that is no
// HTML file of the tree: a directory's path (with or without its /,
// which nginx adds by a redirect) to its index.html.
func treeFile(root, urlPath string) string {
	p := strings.TrimPrefix(path.Clean("/"+urlPath), "/")
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
	if err == nil && fi.IsDir() {
		p = path.Join(p, "index.html")
		fi, err = os.Stat(filepath.Join(root, filepath.FromSlash(p)))
	}
	if err != nil || !fi.Mode().IsRegular() || !strings.HasSuffix(p, ".html") {
		return ""
	}
	return p
}

// reachablePages walks a tree's files from index as a crawler that follows
// every link would, whatever its fingerprints: a[href], area[href],
// link[href], frame[src], iframe[src] and <meta http-equiv=refresh>,
// resolved against the page's URL (or its <base href>), that stay on the
// server and lead to an HTML file of the tree; rel=nofollow links, and
// the links of a page whose robots meta says nofollow, are not followed.
// It parses with golang.org/x/net/html, not with package links.
func reachablePages(root, index string) (*reach, error) {
	r := &reach{depth: map[string]int{index: 0}, linkers: map[string][]string{}}
	const origin = "http://tree.test"
	queue := []string{index}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		base, _ := url.Parse(origin + "/" + f)
		refs, baseHref := pageRefs(b)
		if baseHref != "" {
			if bu, err := base.Parse(baseHref); err == nil {
				base = bu
			}
		}
		for _, ref := range refs {
			u, err := base.Parse(ref)
			if err != nil || u.Scheme+"://"+u.Host != origin {
				continue
			}
			t := treeFile(root, u.Path)
			if t == "" {
				continue
			}
			if _, ok := r.depth[t]; !ok {
				r.depth[t] = r.depth[f] + 1
				r.maxDepth = max(r.maxDepth, r.depth[t])
				queue = append(queue, t)
			}
			if !slices.Contains(r.linkers[t], f) {
				r.linkers[t] = append(r.linkers[t], f)
			}
		}
	}
	return r, nil
}

// pageRefs returns the link references of an HTML page (reachablePages
// says which) and its first <base href>.
func pageRefs(body []byte) (refs []string, base string) {
	z := html.NewTokenizer(bytes.NewReader(body))
	noFollow := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			if noFollow {
				return nil, base
			}
			return refs, base
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			attr := map[string]string{}
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				if _, dup := attr[string(k)]; !dup {
					attr[string(k)] = string(v)
				}
			}
			rel := strings.Fields(strings.ToLower(attr["rel"]))
			switch string(name) {
			case "a", "area", "link":
				if h, ok := attr["href"]; ok && !slices.Contains(rel, "nofollow") {
					refs = append(refs, h)
				}
			case "frame", "iframe":
				if s, ok := attr["src"]; ok {
					refs = append(refs, s)
				}
			case "base":
				if h, ok := attr["href"]; ok && base == "" {
					base = h
				}
			case "meta":
				if strings.EqualFold(attr["http-equiv"], "refresh") {
					c := attr["content"]
					if i := strings.Index(strings.ToLower(c), "url="); i >= 0 {
						refs = append(refs, strings.Trim(c[i+len("url="):], `'" `))
					}
				}
				if strings.EqualFold(attr["name"], "robots") {
					for _, tok := range strings.FieldsFunc(strings.ToLower(attr["content"]), func(r rune) bool { return r == ',' || r == ' ' }) {
						noFollow = noFollow || tok == "nofollow" || tok == "none"
					}
				}
			}
		}
	}
}

// visibleText is the text of an HTML page outside its tags, script and
// style elements dropped, entities decoded, runs of white space collapsed
// to one space: what decides whether two pages say the same.
func visibleText(body []byte) string {
	z := html.NewTokenizer(bytes.NewReader(body))
	var words []string
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.Join(words, " ")
		case html.StartTagToken:
			if name, _ := z.TagName(); string(name) == "script" || string(name) == "style" {
				skip++
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); (string(name) == "script" || string(name) == "style") && skip > 0 {
				skip--
			}
		case html.TextToken:
			if skip == 0 {
				words = append(words, strings.Fields(string(z.Text()))...)
			}
		}
	}
}

func TestVisibleText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<p>a  b</p>\n<p>c&amp;d</p>", "a b c&d"},
		{"<title>T</title><script>var x = '<p>no</p>';</script><style>p{}</style><p>yes</p>", "T yes"},
		{"<p>one<br>two</p>", "one two"},
		{"", ""},
	} {
		if got := visibleText([]byte(c.in)); got != c.want {
			t.Errorf("visibleText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReachablePages(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"index.html":     `<a href="a.html">a</a><a href="sub/">sub</a><link rel=stylesheet href="s.css"><a href="http://elsewhere.test/x.html">x</a><a href="gone.html">404</a>`,
		"a.html":         `<a href="#top">self</a><a href="a.html?q=1">self</a><a rel="nofollow" href="nf.html">nf</a><iframe src="fr.html"></iframe>`,
		"sub/index.html": `<base href="/deep/"><a href="b.html">b</a>`,
		"deep/b.html":    `<meta http-equiv="refresh" content="0; url='../r.html'">`,
		"r.html":         `<meta name="robots" content="noindex, nofollow"><a href="hidden.html">h</a>`,
		"fr.html":        `frame`,
		"nf.html":        `never linked but by nofollow`,
		"hidden.html":    `linked only from a nofollow page`,
		"orphan.html":    `linked from nowhere`,
		"s.css":          `p{}`,
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := reachablePages(root, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"index.html": 0, "a.html": 1, "sub/index.html": 1, "fr.html": 2, "deep/b.html": 2, "r.html": 3}
	if fmt.Sprint(r.depth) != fmt.Sprint(want) {
		t.Errorf("reachable pages and depths %v, want %v", r.depth, want)
	}
	if r.maxDepth != 3 {
		t.Errorf("deepest %d, want 3", r.maxDepth)
	}
}
