package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
)

// TestUsageErrors: arguments and flags a subcommand refuses before it
// hands over to its package (exit 2, naming the flag or saying the
// usage), its --help (exit 0), and one call through each.
func TestUsageErrors(t *testing.T) {
	t.Setenv(configEnv, "")
	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
		stdout string
	}{
		{[]string{"index"}, 2, "usage: trawl index", ""},
		{[]string{"index", "--data", "d", "x.warc.gz"}, 2, "trawl index: --data takes no WARC files and no --out", ""},
		{[]string{"index", "--data", "d", "--out", "x"}, 2, "trawl index: --data takes no WARC files and no --out", ""},
		{[]string{"robots"}, 2, "usage: trawl robots check", ""},
		{[]string{"robots", "check", "robots.txt", "trawl"}, 2, "usage", ""},
		{[]string{"robots", "test", "robots.txt", "trawl", "/"}, 2, "usage", ""},
		{[]string{"robots", "-h"}, 0, "usage", ""},
		{[]string{"robots", "check", "/nonexistent/robots.txt", "trawl", "/"}, 1, "/nonexistent/robots.txt", ""},
		{[]string{"url"}, 2, "usage: trawl url normalize", ""},
		{[]string{"url", "explode"}, 2, `unknown subcommand "explode"`, ""},
		{[]string{"url", "normalize", "--nope", "http://a.test/"}, 2, "flag provided but not defined: -nope", ""},
		{[]string{"url", "normalize", "-h"}, 0, "-base URL", ""},
		{[]string{"url", "normalize", "--base", "ftp://a.test/", "x"}, 2, "--base", ""},
		{[]string{"url", "normalize", "http://A.test"}, 0, "", "http://a.test/\n"},
		{[]string{"testweb", "extra"}, 2, `trawl testweb: unexpected arguments ["extra"]`, ""},
		{[]string{"testweb", "--nosuch"}, 2, "-nosuch", ""},
		{[]string{"testweb", "--hosts", "-4"}, 2, "trawl testweb:", ""},
		{[]string{"testweb", "--for", "-1s"}, 2, "--for -1s is negative", ""},
		{[]string{"export"}, 2, "trawl export: --wacz is missing: give the file to write", ""},
		{[]string{"export", "x.wacz"}, 2, `trawl export: unexpected arguments ["x.wacz"] (give the output with --wacz FILE)`, ""},
		{[]string{"export", "--wacz", "x.tar"}, 2, "trawl export: --wacz x.tar: a WACZ file's name ends in .wacz", ""},
		{[]string{"export", "--job", "x"}, 2, "-job", ""},
		{[]string{"log", "extra"}, 2, `trawl log: unexpected arguments ["extra"] (filters are flags: --host, --status ...)`, ""},
		{[]string{"log", "--job", "x"}, 2, "-job", ""},
		{[]string{"bench"}, 2, "usage: trawl bench", ""},
		{[]string{"bench", "nope"}, 2, "usage: trawl bench", ""},
		{[]string{"bench", "--help"}, 0, "usage: trawl bench", ""},
		{[]string{"bench", "dedup", "extra"}, 2, "trawl bench dedup: unexpected arguments", ""},
		{[]string{"bench", "freshness", "--nope"}, 2, "-nope", ""},
		{[]string{"bench", "freshness", "--pages", "0"}, 2, "Pages = 0", ""},
		{[]string{"bench", "frontier", "--nope"}, 2, "-nope", ""},
		{[]string{"bench", "frontier", "--urls", "0"}, 2, "URLs = 0", ""},
		{[]string{"status", "extra"}, 2, `trawl status: unexpected arguments ["extra"]`, ""},
		{[]string{"crawls"}, 2, "usage: trawl crawls COMMAND", ""},
		{[]string{"crawls", "nope"}, 2, `trawl crawls: unknown command "nope"`, ""},
		{[]string{"crawls", "show"}, 2, "trawl crawls show: want ID, got []", ""},
		{[]string{"crawls", "list", "3"}, 2, `trawl crawls list: want no arguments, got ["3"]`, ""},
		{[]string{"crawls", "show", "x"}, 2, `trawl crawls show: "x" is not a crawl id`, ""},
		{[]string{"crawls", "create"}, 2, "trawl crawls create: no seeds", ""},
		{[]string{"crawls", "create", "--max-depth", "-1", "http://a.test/"}, 2, "--max-depth -1 is negative", ""},
		{[]string{"crawls", "list", "--server", "ftp://x"}, 2, "(--server, env TRAWL_SERVER)", ""},
		{[]string{"hosts", "list", "--crawl", "x"}, 2, `trawl hosts list: --crawl: "x" is not a crawl id`, ""},
		{[]string{"hosts", "policy", "a.test"}, 2, "trawl hosts policy: nothing to set", ""},
		{[]string{"hosts", "policy", "a.test", "--clear", "--paused"}, 2, "--clear and --paused", ""},
		{[]string{"hosts", "policy", "a.test", "--min-delay", "fast"}, 2, "-min-delay", ""},
		{[]string{"node", "show", "x"}, 2, "trawl node show: want no arguments", ""},
	} {
		code, stdout, stderr := trawl(tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.stderr) || tt.stdout != "" && stdout != tt.stdout {
			t.Errorf("trawl %q = %d, stdout %q, stderr %q; want %d, stdout %q and %q on stderr", tt.args, code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
		}
	}
}

// TestLogSettings: trawl log's --data comes from TRAWL_DATA, and its
// flags from the config file's "log" section.
func TestLogSettings(t *testing.T) {
	t.Setenv(configEnv, "")
	data := t.TempDir()
	t.Setenv("TRAWL_DATA", data)
	if code, _, stderr := trawl("log"); code != 1 || !strings.Contains(stderr, "no crawl log in "+filepath.Join(data, "logs")) {
		t.Errorf("trawl log with TRAWL_DATA and no log = %d, stderr %q", code, stderr)
	}
	var log []byte
	for i, job := range []uint32{1, 2, 2} {
		e := crawllog.Entry{Time: time.Date(2026, 12, 2, 3, 4, i, 0, time.UTC), Job: job, URL: "http://a.test/", Status: 200}
		log = crawllog.AppendJSON(log, &e)
	}
	os.MkdirAll(filepath.Join(data, "logs"), 0o755)
	os.WriteFile(filepath.Join(data, "logs", "crawl.log"), log, 0o644)
	t.Setenv("TRAWL_DATA", "")
	cfg := filepath.Join(t.TempDir(), "trawl.json")
	os.WriteFile(cfg, []byte(`{"log": {"data": "`+data+`", "job": 2}}`), 0o644)
	t.Setenv(configEnv, cfg)
	if code, stdout, stderr := trawl("log", "--count", "--json"); code != 0 || !strings.HasPrefix(stdout, `{"entries":2,`) {
		t.Errorf("trawl log with a config file = %d, %s%s", code, stdout, stderr)
	}
}
