package layers

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/trawl-crawler/trawl"

// Layers, bottom first. An entry names a package, or with a trailing
// slash every package under a directory; the longest entry that matches
// decides a package's layer.
var layers = []struct {
	name string
	pkgs []string
}{
	{"libraries", []string{"urlnorm", "robots", "simhash", "links", "css", "scope", "sitemap",
		"warc", "cdxj", "wacz", "crawllog", "fetch", "hostpolicy", "job", "recrawl", "usagepref",
		"internal/procstat", "internal/memlimit", "internal/patternbudget", "internal/hostrank", "internal/atomicfile", "internal/htmltok"}},
	{"store core", []string{"internal/store", "internal/store/"}},
	{"engine", []string{"frontier", "internal/frontierdb", "internal/outbox", "robotscache", "node", "node/"}},
	{"fleet", []string{"cluster/"}},
	{"server", []string{"api", "api/wire", "metrics", "dashboard", "server"}},
	{"command", []string{"cmd/trawl", "internal/cli/"}},
}

// beside are the wings outside the layers: they may import any layer,
// and only the command's layer imports them.
var beside = []string{"internal/bench/", "internal/testkit/", "internal/layers", "e2e", "e2e/"}

type pkg struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v: %s", err, errb.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func matches(rel, entry string) bool {
	if strings.HasSuffix(entry, "/") {
		return strings.HasPrefix(rel, entry)
	}
	return rel == entry
}

// layerOf returns a package's layer (0 is the bottom), len(layers) for
// the wings beside, and -1 for a package in no layer.
func layerOf(rel string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, e := range l.pkgs {
			if matches(rel, e) && len(e) > bestLen {
				best, bestLen = i, len(e)
			}
		}
	}
	for _, e := range beside {
		if matches(rel, e) && len(e) > bestLen {
			best, bestLen = len(layers), len(e)
		}
	}
	return best
}

func TestLayers(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages, want the whole module", len(pkgs))
	}
	command := len(layers) - 1
	var bad []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		from := layerOf(rel)
		if from < 0 {
			bad = append(bad, rel+": in no layer (give it one in internal/layers)")
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			irel := strings.TrimPrefix(imp, module+"/")
			to := layerOf(irel)
			switch {
			case to < 0:
				// reported when the imported package itself is listed
			case from == len(layers) && to == len(layers):
			case from == len(layers):
			case to == len(layers):
				if from != command {
					bad = append(bad, rel+" imports "+irel+": only the command imports the benchmarks and the test kit")
				}
			case to > from:
				bad = append(bad, rel+" ("+layers[from].name+") imports "+irel+" ("+layers[to].name+"), a layer above")
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestNodeWithoutFleet: a single-process crawl links nothing of the fleet.
func TestNodeWithoutFleet(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", module+"/node")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps node: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, module+"/cluster/") || strings.HasPrefix(dep, "github.com/nats-io/") {
			t.Errorf("node depends on %s", dep)
		}
	}
}

func TestLayerOf(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want int
	}{
		{"urlnorm", 0},
		{"internal/store", 1},
		{"internal/store/partition", 1},
		{"node", 2},
		{"cluster/fleet", 3},
		{"api", 4},
		{"api/wire", 4},
		{"cmd/trawl", 5},
		{"internal/cli/config", 5},
		{"internal/bench/freshbench", len(layers)},
		{"internal/testkit/testweb", len(layers)},
		{"internal/unknown", -1},
		{"apix", -1},
	} {
		if got := layerOf(c.rel); got != c.want {
			t.Errorf("layerOf(%q) = %d, want %d", c.rel, got, c.want)
		}
	}
}
