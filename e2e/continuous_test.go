package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestCrawlsCreateContinuous: `trawl crawls create --continuous` sends
// the recrawl settings, `crawls show` and `crawls stats` show them and
// the crawl waiting for recrawls, and a lone --recrawl flag is a usage
// error before any call.
func TestCrawlsCreateContinuous(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	t.Parallel()
	_, data, web := startClientsServer(t)
	code, _, errb := trawl(t, "crawls", "create", "--data", data, "--recrawl-min", "1h", web.Seeds()[0])
	if code != 2 || !strings.Contains(errb, "--recrawl-min 1h0m0s: only a continuous crawl recrawls: set --continuous") {
		t.Errorf("create --recrawl-min without --continuous = %d, stderr %q", code, errb)
	}
	args := append([]string{"crawls", "create", "--data", data, "--continuous", "--recrawl-min", "30m", "--recrawl-budget", "60",
		"--domain", web.Web().Options().Domain}, web.Seeds()...)
	code, out, errb := trawl(t, args...)
	if code != 0 || !strings.HasPrefix(out, "crawl 1 accepted") {
		t.Fatalf("create --continuous = %d\n%s%s", code, out, errb)
	}
	code, out, _ = trawl(t, "crawls", "show", "1")
	if want := "recrawl    continuous: every 30m0s to 720h (default), at most 60 fetches/hour"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("show 1 = %d, lacks %q:\n%s", code, want, out)
	}
	want := "recrawls    0: 0 not modified (304), 0 changed; waiting for recrawls"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		code, out, _ = trawl(t, "crawls", "stats", "1")
		if code == 0 && strings.Contains(out, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats 1 never says %q:\n%s", want, out)
		}
	}
	if code, out, _ = trawl(t, "status"); code != 0 || !strings.Contains(out, "running (waiting for recrawls)") {
		t.Errorf("status = %d, does not show the crawl waiting for recrawls:\n%s", code, out)
	}
}
