package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
// is left as it was, byte for byte (issue 22: `--fresh --max-pages -1`
// wiped the state, then refused the value with exit 1).
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
