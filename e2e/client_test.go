package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/status"
)

// TestClientsAgainstAServer drives trawl status and every trawl crawls
// subcommand against a running server: text and --json answers, the
// token read from --data, and the API's refusals as clear messages with
// exit status 1 (2 for a bad argument).
func TestClientsAgainstAServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	t.Parallel()
	server, data, web := startClientsServer(t)
	noToken := t.TempDir() // a data directory without api.token

	code, out, errb := trawl(t, "status")
	if code != 0 || !strings.Contains(out, server+": ready") || !strings.Contains(out, "none yet") {
		t.Errorf("status on an empty server = %d\n%s%s", code, out, errb)
	}

	code, out, errb = trawl(t, "crawls", "create", "--data", noToken, "--seed", web.Seeds()[0])
	if code != 1 || !strings.Contains(errb, "401 Unauthorized") || !strings.Contains(errb, "no token was given") {
		t.Errorf("create without a token = %d, stderr:\n%s\nwant 1, the 401 and how to give a token", code, errb)
	}
	code, _, errb = trawl(t, "crawls", "create", "--token-file", filepath.Join(noToken, "missing"), "--seed", web.Seeds()[0])
	if code != 2 || !strings.Contains(errb, "missing") {
		t.Errorf("create with a missing token file = %d, stderr %q", code, errb)
	}
	wrong := filepath.Join(noToken, "wrong")
	os.WriteFile(wrong, []byte("not-the-token"), 0o600)
	code, _, errb = trawl(t, "crawls", "create", "--token-file", wrong, "--seed", web.Seeds()[0])
	if code != 1 || !strings.Contains(errb, "refused the token from "+wrong) {
		t.Errorf("create with a wrong token = %d, stderr %q", code, errb)
	}
	code, _, errb = trawl(t, "crawls", "create", "--data", data)
	if code != 2 || !strings.Contains(errb, "no seeds") {
		t.Errorf("create without seeds = %d, stderr %q", code, errb)
	}
	code, _, errb = trawl(t, "crawls", "create", "--data", data, "--priority", "5", "http://a.test/")
	if code != 2 || !strings.Contains(errb, "--priority 5: want -1 (low), 0 (normal) or 1 (high)") {
		t.Errorf("create with a bad priority = %d, stderr %q, want a usage error naming the flag, found before any call", code, errb)
	}

	args := append([]string{"crawls", "create", "--data", data, "--name", "cli", "--domain", web.Web().Options().Domain,
		"--max-depth", "3", "--max-pages", "100000", "--priority", "1", "--continuous"}, web.Seeds()...)
	// Continuous, and a page budget beyond the web: crawl 1 cannot end by
	// itself before the steps below pause, resume and cancel it, however
	// slowly they run (with max pages 40 it once finished first, on a
	// loaded machine).
	code, out, errb = trawl(t, args...)
	if code != 0 || !strings.HasPrefix(out, "crawl 1 accepted") {
		t.Fatalf("create = %d\n%s%s", code, out, errb)
	}
	code, out, _ = trawl(t, "crawls", "create", "--json", "--data", data, "--name", "other", "--max-pages", "1", "--seed", web.Seeds()[0])
	var created struct {
		CrawlID int `json:"crawl_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &created) != nil || created.CrawlID != 2 {
		t.Errorf("create --json = %d %q, want crawl 2", code, out)
	}

	code, out, _ = trawl(t, "crawls", "list")
	if code != 0 || !strings.Contains(out, "ID") || !strings.Contains(out, "cli") || !strings.Contains(out, web.Seeds()[0]) {
		t.Errorf("list = %d\n%s", code, out)
	}
	code, out, _ = trawl(t, "crawls", "show", "1")
	for _, want := range []string{"crawl      1 cli", "max depth  3", "max pages  100000", "priority   1"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("show 1 = %d, lacks %q:\n%s", code, want, out)
		}
	}
	code, out, _ = trawl(t, "crawls", "show", "1", "--json")
	var shown struct {
		ID       int    `json:"id"`
		MaxDepth int    `json:"max_depth"`
		State    string `json:"state"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &shown) != nil || shown.ID != 1 || shown.MaxDepth != 3 {
		t.Errorf("show 1 --json = %d %q", code, out)
	}
	code, out, _ = trawl(t, "crawls", "stats", "1")
	if code != 0 || !strings.Contains(out, "crawl 1, ") || !strings.Contains(out, "pages ") {
		t.Errorf("stats 1 = %d\n%s", code, out)
	}
	code, out, _ = trawl(t, "crawls", "stats", "--json", "1")
	var stats map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &stats) != nil || stats["crawl_id"] != 1.0 {
		t.Errorf("stats --json 1 = %d %q", code, out)
	}

	for _, step := range []struct {
		args      []string
		code      int
		out, errb string
	}{
		{[]string{"pause", "1"}, 0, "crawl 1 paused", ""},
		{[]string{"resume", "1"}, 0, "crawl 1 running", ""},
		{[]string{"cancel", "1"}, 0, "crawl 1 cancelled", ""},
		{[]string{"resume", "1"}, 1, "", "409 Conflict: crawl 1 is cancelled"},
		{[]string{"pause", "7"}, 1, "", "404 Not Found: id: no crawl 7"},
		{[]string{"show", "7"}, 1, "", "404 Not Found: id: no crawl 7"},
		{[]string{"stats", "7"}, 1, "", "no crawl 7"},
		{[]string{"show", "one"}, 2, "", `"one" is not a crawl id`},
		{[]string{"show"}, 2, "", "want ID"},
		{[]string{"list", "extra"}, 2, "", "want no arguments"},
		{[]string{"pause", "0"}, 2, "", `"0" is not a crawl id`},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
	} {
		code, out, errb := trawl(t, append(append([]string{"crawls"}, step.args...), "--data", data)...)
		if code != step.code || !strings.Contains(out, step.out) || !strings.Contains(errb, step.errb) {
			t.Errorf("crawls %q = %d, stdout %q, stderr %q; want %d, %q, %q", step.args, code, out, errb, step.code, step.out, step.errb)
		}
	}

	code, out, _ = trawl(t, "status")
	if code != 0 || !strings.Contains(out, "cancelled") || !strings.Contains(out, "PAGES/S") {
		t.Errorf("status with a crawl = %d\n%s", code, out)
	}
	code, out, _ = trawl(t, "status", "--json")
	var st status.Report
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.Ready || len(st.Crawls) != 2 || st.Crawls[1].Crawl.ID != 1 || st.Crawls[1].Stats == nil {
		t.Errorf("status --json = %d %q", code, out)
	}
	// A node on its own is not a fleet: trawl fleet says so, exit 1.
	if code, _, errb := trawl(t, "fleet", "members"); code != 1 || !strings.Contains(errb, "not a member of a fleet") {
		t.Errorf("fleet members against a node on its own = %d, %q", code, errb)
	}
}

// TestClientsWithoutAServer: with nothing listening, every client says
// so, names the server and how to start one, and exits 1.
func TestClientsWithoutAServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the trawl binary: the full suite runs it")
	}
	t.Parallel()
	setEnv(t, "TRAWL_CONFIG=")
	server := closedServer(t)
	for _, args := range [][]string{{"status"}, {"crawls", "list"}, {"crawls", "show", "1"}, {"crawls", "pause", "1"},
		{"crawls", "create", "--seed", "http://a.test/"}} {
		code, _, errb := trawl(t, append(slices.Clone(args), "--server", server, "--data", t.TempDir())...)
		if code != 1 || !strings.Contains(errb, "no trawl server answers at "+server) || !strings.Contains(errb, "trawl serve") {
			t.Errorf("%q with no server = %d, stderr:\n%s", args, code, errb)
		}
	}
	code, _, errb := trawl(t, "status", "--server", "127.0.0.1:8420")
	if code != 2 || !strings.Contains(errb, "want an http(s) URL") {
		t.Errorf("status --server without a scheme = %d, stderr %q", code, errb)
	}
}

// TestSteeringHostsAndNode drives trawl crawls seeds|exclude, trawl hosts
// and trawl node against a running server: text and --json answers, bad
// arguments (exit 2) and the API's refusals naming the field (exit 1).
func TestSteeringHostsAndNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	t.Parallel()
	_, data, web := startClientsServer(t)
	setEnv(t, "TRAWL_DATA="+data)
	seeds := web.Seeds()
	fresh := strings.TrimSuffix(seeds[0], "/") + "/seeded-by-test"
	// A crawl slow enough to stay running: a page limit it cannot reach
	// soon, the node's 30ms gap per host.
	if code, out, errb := trawl(t, append([]string{"crawls", "create", "--domain", web.Web().Options().Domain, "--max-pages", "100000"}, seeds[:1]...)...); code != 0 {
		t.Fatalf("create = %d\n%s%s", code, out, errb)
	}

	type step struct {
		args      []string
		code      int
		out, errb string
	}
	check := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			code, out, errb := trawl(t, s.args...)
			if code != s.code || !strings.Contains(out, s.out) || !strings.Contains(errb, s.errb) {
				t.Errorf("trawl %q = %d, stdout %q, stderr %q; want %d, %q, %q", s.args, code, out, errb, s.code, s.out, s.errb)
			}
		}
	}
	check([]step{
		{[]string{"crawls", "seeds", "1", seeds[0], fresh}, 0, "crawl 1: 1 seeds added, 1 seen already", ""},
		{[]string{"crawls", "seeds", "1", "--json", fresh}, 0, `"already_seen": 1`, ""},
		{[]string{"crawls", "seeds", "1"}, 2, "", "want ID URL..."},
		{[]string{"crawls", "seeds", "x", seeds[0]}, 2, "", `"x" is not a crawl id`},
		{[]string{"crawls", "seeds", "1", "http://elsewhere.example/"}, 1, "", "400 Bad Request: seeds[0]: "},
		{[]string{"crawls", "seeds", "9", seeds[0]}, 1, "", "404 Not Found: id: no crawl 9"},
		{[]string{"crawls", "seeds", "1", "--data", t.TempDir(), seeds[0]}, 1, "", "no token was given"},

		{[]string{"crawls", "exclude", "1"}, 0, "crawl 1 excludes nothing", ""},
		{[]string{"crawls", "exclude", "1", "--add", "/private/", "--add", `\.pdf$`}, 0, "/private/\n\\.pdf$\n", ""},
		{[]string{"crawls", "exclude", "1", "--remove", "/private/"}, 0, "\\.pdf$\n", ""},
		{[]string{"crawls", "exclude", "1", "--json"}, 0, `"patterns": [`, ""},
		{[]string{"crawls", "exclude", "1", "--add", "("}, 1, "", "400 Bad Request: add[0]: "},
		{[]string{"crawls", "exclude", "1", "--remove", "nope"}, 1, "", "400 Bad Request: remove[0]: "},
		{[]string{"crawls", "exclude"}, 2, "", "want ID"},

		{[]string{"hosts", "list", "--state", "asleep"}, 1, "", "400 Bad Request: state: "},
		{[]string{"hosts", "list", "--crawl", "9"}, 1, "", "404 Not Found: crawl: no crawl 9"},
		{[]string{"hosts", "list", "--crawl", "one"}, 2, "", `--crawl: "one" is not a crawl id`},
		{[]string{"hosts", "list", "--limit", "5000"}, 1, "", "400 Bad Request: limit: "},
		{[]string{"hosts", "list", "extra"}, 2, "", "want no arguments"},
		{[]string{"hosts", "show", "nowhere.example"}, 1, "", "404 Not Found: host: "},
		{[]string{"hosts", "show"}, 2, "", "want HOST"},
		{[]string{"hosts", "policy", "h.example"}, 2, "", "nothing to set"},
		{[]string{"hosts", "policy", "h.example", "--clear", "--paused"}, 2, "", "--clear and --paused"},
		{[]string{"hosts", "policy", "h.example", "--min-delay", "soon"}, 2, "", "invalid value"},
		{[]string{"hosts", "policy", "h.example", "--min-delay", "-1s"}, 1, "", "400 Bad Request: min_delay_ms: "},
		{[]string{"hosts", "policy", "h.example", "--max-parallel", "1000"}, 1, "", "400 Bad Request: max_parallel: "},
		{[]string{"hosts", "policy", "h.example", "--paused", "--data", t.TempDir()}, 1, "", "no token was given"},

		{[]string{"node", "show"}, 0, "node running", ""},
		{[]string{"node", "pause"}, 0, "node paused", ""},
		{[]string{"node", "show", "--json"}, 0, `"paused": true`, ""},
		{[]string{"node", "resume"}, 0, "node running", ""},
		{[]string{"node", "pause", "--data", t.TempDir()}, 1, "", "401 Unauthorized"},
		{[]string{"node", "show", "extra"}, 2, "", "want no arguments"},
		{[]string{"node", "frobnicate"}, 2, "", `unknown command "frobnicate"`},
	})

	// The hosts: a page of one with --limit 1 says there are more; --all
	// and --all --json list every host of the crawl.
	var hosts struct {
		Hosts []struct {
			Host string `json:"host"`
		} `json:"hosts"`
	}
	for deadline := time.Now().Add(20 * time.Second); len(hosts.Hosts) < 2; time.Sleep(20 * time.Millisecond) {
		code, out, errb := trawl(t, "hosts", "list", "--all", "--limit", "1", "--crawl", "1", "--json")
		if err := json.Unmarshal([]byte(out), &hosts); code != 0 || err != nil || time.Now().After(deadline) {
			t.Fatalf("hosts list --all --json = %d %v\n%s%s; want at least 2 hosts in time", code, err, out, errb)
		}
	}
	host := hosts.Hosts[0].Host
	code, out, errb := trawl(t, "hosts", "list", "--limit", "1")
	if code != 0 || !strings.Contains(out, "HOST") || !strings.Contains(out, "more hosts: --all") {
		t.Errorf("hosts list --limit 1 = %d\n%s%s", code, out, errb)
	}
	code, out, _ = trawl(t, "hosts", "list", "--all")
	if code != 0 || strings.Count(out, "\n") < len(hosts.Hosts)+1 || strings.Contains(out, "more hosts") {
		t.Errorf("hosts list --all = %d, want %d hosts:\n%s", code, len(hosts.Hosts), out)
	}
	code, out, _ = trawl(t, "hosts", "show", host)
	for _, want := range []string{"host         " + host, "by crawl     crawl 1: ", "policy       default"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("hosts show %s = %d, lacks %q:\n%s", host, code, want, out)
		}
	}
	check([]step{
		{[]string{"hosts", "policy", host, "--min-delay", "250ms", "--max-parallel", "2", "--paused"}, 0, "host " + host + ": policy min-delay 250ms, max-parallel 2, paused", ""},
		{[]string{"hosts", "show", host}, 0, "policy       min-delay 250ms, max-parallel 2, paused", ""},
		{[]string{"hosts", "policy", host, "--max-parallel", "1"}, 0, ": policy max-parallel 1\n", ""},
		{[]string{"hosts", "policy", host, "--clear", "--json"}, 0, `"min_delay_ms": null`, ""},
		{[]string{"hosts", "show", host, "--json"}, 0, `"queued_by_crawl"`, ""},
		{[]string{"crawls", "cancel", "1"}, 0, "crawl 1 cancelled", ""},
		{[]string{"crawls", "seeds", "1", seeds[0]}, 1, "", "409 Conflict: crawl is cancelled"},
	})
}
