package e2e

// End-to-end durability tests: `trawl crawl` killed with SIGKILL
// at random moments and restarted with the same command, and `trawl crawl`
// on a full disk. Both judge the crawl from the synthetic web's request log
// (see rig.checkLog for the rules) and the WARC files with warcio.

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/bench/childout"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// fullDiskWeb is the web TestFullDiskResume crawls: small enough for
// seconds, with one host at Crawl-delay 2 and the hostile hosts. Its
// pages have the default sizes (20-60 KB), which its disk budgets are
// measured against (the crawl writes about 6.4 MB).
var fullDiskWeb = testweb.Options{Seed: 21, Hosts: 40, BigPages: 25, Hostile: true}

// crashWeb is the web TestCrashResume crawls: fullDiskWeb with small
// pages, since the crash test judges gaps and repeats, not bytes, and the
// web's server runs under the race detector. The Crawl-delay host makes a
// restart that forgets a host's next allowed time break its gap.
var crashWeb = fullDiskWeb.SmallPages()

// TestCrashResume kills `trawl crawl` with SIGKILL three times at random
// moments mid-crawl, restarting it each time with the identical command,
// and lets the fourth run finish. The web's log over all runs must show a
// complete, polite crawl with no repeat beyond what the crashes excuse, and
// the WARC files must read cleanly and hold every fetched URL. Then a fifth
// run on the finished directory must fetch nothing, and a run with --fresh
// must crawl everything again and keep the earlier WARC files.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	t.Parallel()
	const crashes = 3
	seed := uint64(time.Now().UnixNano())
	t.Logf("crash moments from seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))

	g := newRig(t, crashWeb, filepath.Join(t.TempDir(), "data"))
	for i := range crashes {
		// Kill only once this run has made progress of its own, so every
		// crash lands mid-crawl, not during start-up. The first crash
		// comes at least ackSlack after that, so that the pages the first
		// run fetched early must not be fetched again; the others anywhere
		// in the next two seconds.
		least, spread := time.Duration(0), 2*time.Second
		if i == 0 {
			least, spread = ackSlack, time.Second
		}
		g.crash(g.start(), rng, 3, least, spread)
	}
	last := g.start()
	g.wait(last, 3*time.Minute)
	if last.r.code != 0 {
		t.Fatalf("%s after %d crashes\nstdout:\n%s\nstderr:\n%s", last.r, crashes, last.r.stdout.String(), childout.LastLines(last.r.stderr.String(), 30))
	}
	if !strings.Contains(last.r.stdout.String(), "crawl exhausted") {
		t.Errorf("%s: summary lacks %q:\n%s", last.r, "crawl exhausted", last.r.stdout.String())
	}
	g.logRuns()
	t.Logf("%s", g.checkLog())
	g.checkWARC()

	// Resuming a finished crawl: the seeds given again are already seen,
	// nothing is queued, so nothing is requested.
	before := len(g.srv.Log())
	again := g.start()
	g.wait(again, time.Minute)
	if again.r.code != 0 {
		t.Fatalf("%s on a finished data directory\nstderr:\n%s", again.r, childout.LastLines(again.r.stderr.String(), 20))
	}
	if reqs := g.srv.Log()[before:]; len(reqs) > 0 {
		t.Errorf("%s on a finished data directory made %d requests, want none; first %s%s", again.r, len(reqs), reqs[0].Host, reqs[0].Path)
	}

	// --fresh wipes the crawl state, keeps the WARC files, and crawls the
	// whole web again (politely: the gaps are judged over the whole log).
	oldWARC := warcNames(t, g.data)
	before = len(g.srv.Log())
	fresh := g.start("--fresh")
	g.wait(fresh, 2*time.Minute)
	if fresh.r.code != 0 {
		t.Fatalf("%s with --fresh\nstderr:\n%s", fresh.r, childout.LastLines(fresh.r.stderr.String(), 20))
	}
	newWARC := warcNames(t, g.data)
	for _, name := range oldWARC {
		if !slices.Contains(newWARC, name) {
			t.Errorf("--fresh removed WARC file %s", name)
		}
	}
	if len(newWARC) <= len(oldWARC) {
		t.Errorf("--fresh wrote no new WARC file: %d before, %d after", len(oldWARC), len(newWARC))
	}
	opts := g.analyzeOptions()
	opts.MinCoverage = 1
	rep := testweb.Analyze(g.srv.Web(), g.srv.Log()[before:], opts)
	if p := rep.Problems(); len(p) > 0 {
		t.Errorf("the --fresh crawl shows %d problems:\n%s", len(p), strings.Join(p[:min(len(p), 20)], "\n"))
	}
	whole := testweb.Analyze(g.srv.Web(), g.srv.Log(), g.analyzeOptions())
	for _, h := range whole.Hosts {
		for _, v := range h.GapViolations {
			if v.Second.Start.Before(fresh.r.start) {
				continue // an earlier run's, reported above
			}
			t.Errorf("host %s: %s at %s then %s %v later, want at least %v", v.Host, v.First.Path,
				v.First.Start.Format("15:04:05.000"), v.Second.Path, v.Gap, v.Want)
		}
	}
	g.checkWARC() // the --fresh run's files too
}

// TestFullDiskResume crawls onto a small tmpfs whose free space a ballast
// file has nearly used up. The crawl must stop by itself with a clear
// error naming the full disk (an exit code, no panic); after the ballast
// is deleted, the same command must resume and finish, and the web's log
// and the WARC files must pass the crash test's checks (the failed run
// counts as an interruption). Two budgets: one that fills up mid-crawl
// (about half of the ~6.4 MB this crawl writes: the WARC write fails), and
// one so small that the disk is full while the crawl is starting (the
// store cannot commit the seeds).
func TestFullDiskResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	t.Parallel()
	for _, tt := range []struct {
		name     string
		free     int64 // bytes left free for the crawler
		midCrawl bool  // the disk fills up after pages were fetched
	}{
		{"mid-crawl", 3 << 20, true},
		{"at-start", 16 << 10, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testFullDisk(t, tt.free, tt.midCrawl)
		})
	}
}

func testFullDisk(t *testing.T, free int64, midCrawl bool) {
	mnt := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	// A real full disk: a small tmpfs filled by a ballast file. Where a
	// tmpfs cannot be mounted (no root, no CAP_SYS_ADMIN), the same write
	// failure is made with RLIMIT_FSIZE (prlimit): the write fails with
	// "file too large" instead of "no space left on device".
	wantErr := "no space left on device"
	ballast := filepath.Join(mnt, "ballast")
	mountErr := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m")
	if mountErr == nil {
		t.Cleanup(func() {
			if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
				t.Errorf("unmount %s: %v", mnt, err)
			}
		})
		fillDisk(t, mnt, ballast, free)
	} else {
		t.Logf("mount a tmpfs on %s: %v; limiting file size with prlimit instead", mnt, mountErr)
		wantErr = "file too large"
	}

	g := newRig(t, fullDiskWeb, filepath.Join(mnt, "data"))
	if mountErr != nil {
		g.fsize = free
	}
	full := g.start()
	g.wait(full, time.Minute)
	stderr := full.r.stderr.String()
	pages := g.pagesSince(full.r.start)
	if full.r.code == 0 {
		size, _ := treeSize(g.data)
		t.Fatalf("%s with %d bytes free: the crawl finished (data %d bytes); want it stopped by the full disk\nstdout:\n%s",
			full.r, free, size, full.r.stdout.String())
	}
	if !strings.Contains(stderr, wantErr) {
		t.Errorf("%s on a full disk: stderr does not say %q:\n%s", full.r, wantErr, childout.LastLines(stderr, 20))
	}
	if strings.Contains(stderr, "panic:") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("%s on a full disk panicked or dumped goroutines:\n%s", full.r, childout.LastLines(stderr, 40))
	}
	if midCrawl && pages == 0 {
		t.Errorf("%s fetched no pages before the disk was full; the budget leaves no room to test a resume mid-crawl", full.r)
	}
	t.Logf("%s on a full disk (%d bytes free): %d pages fetched; its error: %s", full.r, free, pages, lastLine(stderr))

	// Free space and run the same command again.
	if mountErr == nil {
		if err := os.Remove(ballast); err != nil {
			t.Fatal(err)
		}
	}
	g.fsize = 0
	resumed := g.start()
	g.wait(resumed, 3*time.Minute)
	if resumed.r.code != 0 {
		t.Fatalf("%s after freeing space\nstdout:\n%s\nstderr:\n%s", resumed.r, resumed.r.stdout.String(), childout.LastLines(resumed.r.stderr.String(), 30))
	}
	g.logRuns()
	t.Logf("%s", g.checkLog())
	g.checkWARC()
}

// fillDisk allocates a ballast file on the file system of dir so that
// about free bytes stay available.
func fillDisk(t *testing.T, dir, ballast string, free int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	avail := int64(st.Bavail) * st.Bsize
	if avail <= free {
		t.Fatalf("%s has %d bytes free, want more than %d", dir, avail, free)
	}
	f, err := os.Create(ballast)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, avail-free); err != nil {
		t.Fatalf("allocate %d bytes of ballast in %s: %v", avail-free, ballast, err)
	}
}

// warcNames lists DATA/warc.
func warcNames(t *testing.T, data string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(data, "warc"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string { return childout.LastLines(s, 1) }
