package links

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// render writes p in the golden format: header lines, then one line per link,
// tag TAB rel TAB nofollow TAB ref. Strings are Go-quoted so that whitespace,
// NUL replacements and invalid UTF-8 stay visible and the file stays text.
func render(p Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "encoding: %s\n", p.Encoding)
	fmt.Fprintf(&b, "base: %q\n", p.BaseHref)
	fmt.Fprintf(&b, "canonical: %q\n", p.Canonical)
	fmt.Fprintf(&b, "title: %q\n", p.Title)
	fmt.Fprintf(&b, "noindex: %v\n", p.NoIndex)
	fmt.Fprintf(&b, "nofollow: %v\n", p.NoFollow)
	fmt.Fprintf(&b, "dropped: %d\n", p.Dropped)
	fmt.Fprintf(&b, "links: %d\n", len(p.Links))
	for _, l := range p.Links {
		fmt.Fprintf(&b, "%s\t%s\t%v\t%q\n", l.Tag, l.Rel, l.NoFollow, l.Ref)
	}
	return b.String()
}

// TestGolden extracts each testdata/*.html with agent "trawl" and compares
// the result with the .golden file next to it. Run with -update to rewrite
// the golden files, then review the diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.html files")
	}
	for _, in := range files {
		t.Run(filepath.Base(in), func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := render(Extract(body, "trawl"))
			golden := strings.TrimSuffix(in, ".html") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Extract(%s) =\n%s\nwant (%s)\n%s", in, got, golden, want)
			}
		})
	}
}
