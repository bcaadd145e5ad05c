package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// treeOf is every file under dir with a digest of its contents, and every
// directory, as one string to compare.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			b.WriteString(rel + "/\n")
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b.WriteString(fmt.Sprintf("%s %x\n", rel, sha256.Sum256(data)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCrawlChecksEveryValueBeforeTouchingData: a bad value of the crawl's
// spec, on the command line or in the config file, is a usage error (exit
// 2, the flag named, the value and what would be right) found before
// --fresh wipes the data directory or the store is opened: the directory
// is left as it was, byte for byte (`--fresh --max-pages -1` must not
// wipe the state and then refuse the value).
func TestCrawlChecksEveryValueBeforeTouchingData(t *testing.T) {
	data := t.TempDir()
	n, err := node.Open(node.Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Submit(job.Spec{Name: "crawl", Seeds: []string{"http://a.test/"}}); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	before := treeOf(t, data)
	if !strings.Contains(before, "state/") {
		t.Fatalf("the data directory holds no state to lose:\n%s", before)
	}
	cfg := filepath.Join(t.TempDir(), "trawl.json")
	if err := os.WriteFile(cfg, []byte(`{"crawl": {"max-depth": -3}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"negative page limit", []string{"--max-pages", "-1", "http://a.test/"}, "--max-pages -1 is negative: want 0 (no limit) or more"},
		{"negative depth", []string{"--max-depth", "-1", "http://a.test/"}, "--max-depth -1 is negative: want 0 (no limit) or more"},
		{"give-up over a year", []string{"--robots-give-up", "9000h", "http://a.test/"}, "--robots-give-up 9000h0m0s is over a year"},
		{"recrawl without --continuous", []string{"--recrawl-min", "1h", "http://a.test/"}, "--recrawl-min 1h0m0s: only a continuous crawl recrawls"},
		{"ftp seed", []string{"ftp://a.test/"}, `seed "ftp://a.test/" is not an http or https URL`},
		{"seed outside --domain", []string{"--domain", "a.test", "http://a.test/", "http://b.test/"}, `seed "http://b.test/" is outside the crawl's domains (a.test)`},
		{"bad domain", []string{"--domain", "a b", "http://a.test/"}, `--domain "a b" is not a host name`},
		{"no expected URLs", []string{"--expected-urls", "0", "http://a.test/"}, "--expected-urls 0: want 1 to 1000000000000"},
		{"expected URLs past the bound", []string{"--expected-urls", "18446744073709551615", "http://a.test/"}, "--expected-urls 18446744073709551615: want 1 to"},
		{"expected URLs past the memory", []string{"--expected-urls", "900000000000", "http://a.test/"}, "--expected-urls 900000000000: its three Bloom filters would take"},
		{"from the config file", []string{"--config", cfg, "http://a.test/"}, "--max-depth -3 is negative: want 0 (no limit) or more (set in the config file)"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"crawl", "--data", data, "--fresh"}, c.args...)
		code := run(args, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%s: trawl %q = %d, stderr %q; want 2 and %q", c.name, args, code, errb.String(), c.want)
		}
		if after := treeOf(t, data); after != before {
			t.Fatalf("%s: trawl %q changed the data directory", c.name, args)
		}
	}
}

// TestOneCrawlWhicheverDoor: a crawl asked for with nothing but a seed has
// the same spec through every door: trawl crawl's flags, the config file
// (a section that sets other keys), trawl crawls create, and POST
// /v1/crawls with the keys left out, over a real node: no door may default
// differently (say, to no depth limit where another says 20). That spec is job.Defaults() with the seed.
func TestOneCrawlWhicheverDoor(t *testing.T) {
	t.Setenv(configEnv, "")
	t.Setenv("TRAWL_SERVER", "")
	for _, v := range []string{"TRAWL_TOKEN", "TRAWL_TOKEN_FILE", "TRAWL_DATA"} {
		t.Setenv(v, "")
	}
	const seed = "http://a.test/"
	n, err := node.Open(node.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	srv := httptest.NewServer(api.New(api.Options{Node: func() api.Node { return n }, Token: "t0ken"}))
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	cfg := filepath.Join(t.TempDir(), "trawl.json")
	for p, b := range map[string]string{tokenFile: "t0ken\n", cfg: `{"crawl": {"concurrency": 8, "min-delay": "2s"}}`} {
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fromFlags := func(args ...string) (job.Spec, error) {
		fs := newFlagSet("crawl", crawlHelp, nodeEnv, io.Discard)
		var a crawlArgs
		a.register(fs)
		src, code, ok := parseFlags(fs, append(args, seed), nodeEnv, io.Discard)
		if !ok {
			return job.Spec{}, fmt.Errorf("parseFlags: exit %d", code)
		}
		a.src = src
		_, spec, err := a.options(fs.Args())
		return spec, err
	}
	submitted := func(id job.ID) (job.Spec, error) {
		j := n.Job(id)
		if j == nil {
			return job.Spec{}, fmt.Errorf("no crawl %d", id)
		}
		return j.Spec, nil
	}
	for _, door := range []struct {
		name string
		spec func() (job.Spec, error)
	}{
		{"trawl crawl", func() (job.Spec, error) { return fromFlags() }},
		{"the config file", func() (job.Spec, error) { return fromFlags("--config", cfg) }},
		{"trawl crawls create", func() (job.Spec, error) {
			code, out, errb := trawl("crawls", "create", "--server", srv.URL, "--token-file", tokenFile, "--json", "--seed", seed)
			var created struct {
				CrawlID job.ID `json:"crawl_id"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &created) != nil {
				return job.Spec{}, fmt.Errorf("exit %d, stdout %q, stderr %q", code, out, errb)
			}
			return submitted(created.CrawlID)
		}},
		{"POST /v1/crawls", func() (job.Spec, error) {
			req, _ := http.NewRequest("POST", srv.URL+"/v1/crawls", strings.NewReader(`{"seeds": ["`+seed+`"]}`))
			req.Header.Set("Authorization", "Bearer t0ken")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return job.Spec{}, err
			}
			defer resp.Body.Close()
			var created struct {
				CrawlID job.ID `json:"crawl_id"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != 202 {
				return job.Spec{}, fmt.Errorf("%s, %v", resp.Status, err)
			}
			return submitted(created.CrawlID)
		}},
	} {
		got, err := door.spec()
		if err != nil {
			t.Errorf("%s: %v", door.name, err)
			continue
		}
		want := job.Defaults()
		want.Seeds = []string{seed}
		got.Name = "" // trawl crawl names its crawl "crawl"; the others leave it to the user
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: spec\n%+v\nwant job.Defaults() with the seed:\n%+v", door.name, got, want)
		}
	}
}
