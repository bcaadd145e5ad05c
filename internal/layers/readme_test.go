package layers

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// readmeGroups names the README's layout groups by the layer they are.
var readmeGroups = map[string]string{
	"Libraries":  "libraries",
	"Store core": "store core",
	"Engine":     "engine",
	"Fleet":      "fleet",
	"Server":     "server",
	"Command":    "command",
	"Benchmarks": "beside",
	"Test kit":   "beside",
	"Beside":     "beside",
}

// TestReadmeLayout: the README's layout table lists every package of the
// module, each once, under the group of the layer it is in, and nothing
// that does not exist.
func TestReadmeLayout(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Layout\n")
	if start < 0 {
		t.Fatal("README.md has no ## Layout section")
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	group := regexp.MustCompile(`^\| \*\*([^*]+)\*\*`)
	name := regexp.MustCompile("`([a-z0-9/]+)`")
	listed := map[string]string{} // package → README group's layer
	layer := ""
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		if m := group.FindStringSubmatch(line); m != nil {
			g := strings.TrimSpace(m[1])
			if strings.Contains(g, "(") {
				g = strings.TrimSpace(g[:strings.Index(g, "(")])
			}
			l, ok := readmeGroups[g]
			if !ok {
				t.Errorf("README layout: group %q is no layer", g)
			}
			layer = l
			continue
		}
		cells := strings.SplitN(line, "|", 3)
		if len(cells) < 3 || layer == "" {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			if _, dup := listed[m[1]]; dup {
				t.Errorf("README layout: %s listed twice", m[1])
			}
			listed[m[1]] = layer
		}
	}
	want := map[string]string{}
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		switch l := layerOf(rel); {
		case l < 0:
		case l == len(layers):
			want[rel] = "beside"
		default:
			want[rel] = layers[l].name
		}
	}
	var bad []string
	for p, l := range want {
		got, ok := listed[p]
		switch {
		case !ok:
			bad = append(bad, p+": not in the README's layout table")
		case got != l:
			bad = append(bad, p+": listed under "+got+", is in "+l)
		}
	}
	for p := range listed {
		if _, ok := want[p]; !ok {
			bad = append(bad, p+": in the README's layout table, no such package")
		}
	}
	sort.Strings(bad)
	for _, s := range bad {
		t.Error(s)
	}
}
