package fleetbench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/bench/cpulimit"
	"github.com/trawl-crawler/trawl/internal/testkit/trawlbin"
)

func TestMain(m *testing.M) { os.Exit(trawlbin.Main(m)) }

// TestBenchFleet runs `trawl bench fleet --nodes 1,2 --json` with a short
// window, as a user does, and checks the JSON, the table printed from it
// and that both sizes fetched pages. Efficiency is reported, never asserted: it depends on
// the machine.
func TestBenchFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("two fleets of trawl serve processes")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for the CPU cgroups")
	}
	g, err := cpulimit.New("trawl-bench-fleet-test-probe", 0.5)
	if err != nil {
		t.Skipf("no writable CPU cgroup: %v", err)
	}
	g.Close()
	bin := trawlbin.Build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(extra ...string) (string, string) {
		cmd := exec.CommandContext(ctx, bin, append([]string{"bench", "fleet", "--nodes", "1,2", "--window", "3s",
			"--warmup", "2s", "--hosts", "1500", "--cpu", "0.4"}, extra...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bench fleet %v: %v\n%s\n%s", extra, err, out, stderr.Bytes())
		}
		return string(out), stderr.String()
	}
	// One run, --json; the table is the same result printed as the
	// command prints it without --json (Main: Print or the JSON encoder).
	js, _ := run("--json")
	var r Result
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("--json: %v\n%s", err, js)
	}
	var table bytes.Buffer
	r.Print(&table)
	out := table.String()
	t.Logf("\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[0], "fleet scaling:") ||
		!strings.Contains(lines[1], "pages/s") || !strings.Contains(lines[1], "efficiency") || !strings.Contains(lines[1], "CPU-ms/page") {
		t.Fatalf("not the table's shape:\n%s", out)
	}
	for i, want := range []struct {
		nodes string
		names []string
	}{{"1", []string{"n1"}}, {"2", []string{"n1", "n2"}}} {
		f := strings.Fields(lines[2+i])
		if len(f) < 8 || f[0] != want.nodes {
			t.Fatalf("row %d %q: want nodes %s and 8 columns or more", i, lines[2+i], want.nodes)
		}
		if f[1] == "0" {
			t.Errorf("%s node(s): pages/s %s, want > 0", want.nodes, f[1])
		}
		for _, name := range want.names {
			if !strings.Contains(lines[2+i], name+" ") {
				t.Errorf("row %q lacks %s's CPU", lines[2+i], name)
			}
		}
	}
	if !strings.HasPrefix(lines[4], "efficiency:") {
		t.Errorf("line 5 %q: want the efficiency's definition", lines[4])
	}
	// --json: the figures as one object.
	if len(r.Sizes) != 2 || r.Sizes[0].Nodes != 1 || r.Sizes[1].Nodes != 2 || len(r.Sizes[1].PerNode) != 2 {
		t.Fatalf("--json sizes %+v: want 1 and 2 nodes", r.Sizes)
	}
	for _, s := range r.Sizes {
		if !(s.PagesPerSec > 0) || s.Pages <= 0 || !(s.CPUMsPerPage > 0) {
			t.Errorf("%d node(s): pages %d, pages/s %v, CPU-ms/page %v: want all > 0", s.Nodes, s.Pages, s.PagesPerSec, s.CPUMsPerPage)
		}
	}
	if r.Sizes[0].Efficiency != 1 {
		t.Errorf("efficiency of the 1-node run = %v, want 1 (it is the baseline)", r.Sizes[0].Efficiency)
	}
	// Every cgroup removed.
	if ents, err := os.ReadDir(cpulimit.V1CPU); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "trawl-bench-fleet-") {
				t.Errorf("cgroup %s left behind", e.Name())
			}
		}
	}
}
