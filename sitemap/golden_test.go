package sitemap

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// golden is what a golden file holds for one input: Parse's result and its
// error text.
type golden struct {
	Summary Summary `json:"summary"`
	Error   string  `json:"error,omitempty"`
	Entries []Entry `json:"entries"`
}

// TestGolden parses each testdata/*.xml and testdata/*.txt with default
// Options and compares the result, as JSON, with the .golden file next to
// it. Run with -update to rewrite the golden files, then review the diff.
func TestGolden(t *testing.T) {
	var files []string
	for _, pat := range []string{"*.xml", "*.txt"} {
		m, err := filepath.Glob(filepath.Join("testdata", pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(bytes.NewReader(in), Options{})
			var g golden
			if s != nil {
				g.Summary, g.Entries = s.Summary, s.Entries
			}
			if err != nil {
				g.Error = err.Error()
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(g); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			want := strings.TrimSuffix(file, filepath.Ext(file)) + ".golden"
			if *update {
				if err := os.WriteFile(want, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			exp, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, exp) {
				t.Errorf("Parse(%s) differs from %s:\n got:\n%s\nwant:\n%s", file, want, got, exp)
			}
		})
	}
}
