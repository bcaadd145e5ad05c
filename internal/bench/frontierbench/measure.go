package frontierbench

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/trawl-crawler/trawl/internal/procstat"
)

// urlAt is URL i of the synthetic set: host i mod hosts, path i. URLs are
// made from their index when needed, never all held at once, in a buffer
// on the stack: one allocation, the URL's.
func urlAt(i, hosts int) (url, host string) {
	var a [64]byte
	buf := append(a[:0], "http://h"...)
	buf = appendPadded(buf, i%hosts, 7)
	buf = append(buf, ".bench.test/p/"...)
	buf = strconv.AppendInt(buf, int64(i), 10)
	url = string(buf)
	return url, url[len("http://") : strings.IndexByte(url[len("http://"):], '/')+len("http://")]
}

// appendPadded appends v in decimal, zero-padded to width digits.
func appendPadded(buf []byte, v, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], int64(v), 10)
	for n := len(d); n < width; n++ {
		buf = append(buf, '0')
	}
	return append(buf, d...)
}

// settledRSS returns the resident set size after a full GC has returned
// freed memory to the OS.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return procstat.Bytes("VmRSS")
}

// dirSize is the total size of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// The frontier's targets on the reference machine (2 cores).
const (
	targetSeenNew       = 1_000_000
	targetEnqueue       = 200_000
	targetLeaseComplete = 50_000
	targetRSS           = 1 << 30
)

// Print writes r to w as a table, each target marked ok or
// MISSED.
func Print(w io.Writer, r Result) {
	check := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "MISSED"
	}
	mib := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	fmt.Fprintf(w, "frontier of %d URLs over %d hosts (%d workers, batches of %d; store %s on disk)\n",
		r.URLs, r.Hosts, r.Workers, r.Batch, mib(r.StoreBytes))
	fmt.Fprintf(w, "  %-28s %12.0f /s  target >= %d  %s\n", "seen-check, new URLs", r.SeenNewPerSec, targetSeenNew, check(r.SeenNewPerSec >= targetSeenNew))
	fmt.Fprintf(w, "  %-28s %12.0f /s  (%d sampled)\n", "seen-check, known URLs", r.SeenKnownPerSec, r.SeenKnownChecked)
	fmt.Fprintf(w, "  %-28s %12.0f /s  target >= %d  %s  (%.1f s)\n", "enqueue (seen-check+commit)", r.EnqueuePerSec, targetEnqueue, check(r.EnqueuePerSec >= targetEnqueue), r.EnqueueSeconds)
	fmt.Fprintf(w, "  %-28s %12.0f /s  target >= %d  %s  (%d completed, %.1f CPU-µs each)\n", "lease+complete", r.LeaseCompletePerS, targetLeaseComplete, check(r.LeaseCompletePerS >= targetLeaseComplete), r.LeaseCompleted, r.LeaseCPUMicros)
	fmt.Fprintf(w, "  %-28s %12s     target < 1 GiB  %s  (peak %s)\n", "RSS, N queued", mib(r.RSSBytes), check(r.RSSBytes < targetRSS), mib(r.RSSPeakBytes))
	fmt.Fprintf(w, "  %-28s %12.2f s   RSS after %s (peak %s)\n", "start-up, N queued", r.StartupSeconds, mib(r.RSSStartupBytes), mib(r.RSSStartupPeak))
	fmt.Fprintf(w, "  %-28s %12s\n", "RSS after lease+complete", mib(r.RSSLeaseBytes))
	frac := func(v, ceiling float64) string {
		if ceiling <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", v/ceiling)
	}
	fmt.Fprintf(w, "ceilings measured in the same run:\n")
	fmt.Fprintf(w, "  %-28s %12.0f /s  (one goroutine, 4 KiB appends)\n", "fsync", r.FsyncsPerSec)
	fmt.Fprintf(w, "  %-28s %12.0f /s  enqueue is %s of it\n", "raw ingest of enqueue writes", r.IngestPerSec, frac(r.EnqueuePerSec, r.IngestPerSec))
	fmt.Fprintf(w, "  %-28s %12.0f /s  lease+complete is %s of it  (%.1f CPU-µs each)\n", "raw completion commits", r.CompletePerSec, frac(r.LeaseCompletePerS, r.CompletePerSec), r.CompleteCPUMicros)
	printFootprint(w, r)
}
