package usagepref

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/links"
	"github.com/trawl-crawler/trawl/robots"
)

var update = flag.Bool("update", false, "rewrite testdata/gather/*.json from the current output")

// readCase reads a case file: sections opened by "-- NAME --" lines.
// Section "input" holds "agent: A", "path: P" and "header: Name: value"
// lines; "robots.txt", "tdmrep.json" and "html" hold those bodies (the
// html goes through links.Extract for its meta elements).
func readCase(t *testing.T, file string) Input {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	name := ""
	for line := range strings.SplitAfterSeq(string(b), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "-- "); ok && strings.HasSuffix(s, " --") {
			name = strings.TrimSuffix(s, " --")
			sections[name] = ""
			continue
		}
		sections[name] += line
	}
	in := Input{Header: http.Header{}}
	for line := range strings.SplitSeq(sections["input"], "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "agent":
			in.Agent = v
		case "path":
			in.PathQuery = v
		case "header":
			hk, hv, _ := strings.Cut(v, ": ")
			in.Header.Add(hk, hv)
		}
	}
	if body, ok := sections["robots.txt"]; ok {
		in.Robots = robots.Parse([]byte(body))
	}
	if body, ok := sections["tdmrep.json"]; ok {
		in.TDMRep = ParseTDMRep([]byte(body))
	}
	if body, ok := sections["html"]; ok {
		in.Metas = links.Extract([]byte(body), in.Agent).Metas
	}
	return in
}

// TestGolden gathers each testdata/gather/*.txt case and compares the JSON
// form with the .json file beside it. Run with -update to rewrite them,
// then review the diff: the JSON form is a stored format (FormatVersion).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "gather", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p := Gather(readCase(t, file))
			got, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(file, ".txt") + ".json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Gather(%s) =\n%s\nwant (%s)\n%s", file, got, golden, want)
			}
			// The JSON form reads back to the same record.
			var back Preferences
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			again, _ := json.MarshalIndent(back, "", "  ")
			if !bytes.Equal(append(again, '\n'), got) {
				t.Errorf("JSON round trip differs:\n%s", again)
			}
		})
	}
}

func robotsParse(b []byte) *robots.Robots { return robots.Parse(b) }
