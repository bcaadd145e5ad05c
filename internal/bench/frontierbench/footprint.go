package frontierbench

import (
	"fmt"
	"io"
	"runtime"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/urlseen"
)

// Footprint is what the frontier and the seen gate cost per item, measured
// in the run: bytes on disk per queued URL, per seen URL and per host
// record, Go heap per host, the Bloom filters' memory, and start-up time by
// part. Project extends them to a larger crawl.
type Footprint struct {
	DiskQueueBytesPerURL float64 `json:"disk_queue_bytes_per_url"` // the queue keys after enqueue, over URLs
	DiskSeenBytesPerURL  float64 `json:"disk_seen_bytes_per_url"`  // the seen keys after enqueue, over URLs
	DiskHostBytesPerHost float64 `json:"disk_host_bytes_per_host"` // host records after leasing, over the hosts that have one
	// RawQueueBytesPerURL and RawSeenBytesPerURL are the keys' and values'
	// own bytes, before compression: the bench's synthetic URLs, numbered
	// and alike, compress far better than the web's, so the disk figures
	// above are a floor and these a ceiling.
	RawQueueBytesPerURL float64 `json:"raw_queue_bytes_per_url"`
	RawSeenBytesPerURL  float64 `json:"raw_seen_bytes_per_url"`
	HostRecords         int     `json:"host_records"` // hosts with a record after leasing
	// HeapBaseBytes is the Go heap before the state is opened, and
	// HeapStartupBytes after the restart with N queued (both live, after a
	// collection); FilterBytes is the three filters' part of the latter.
	HeapBaseBytes    int64 `json:"heap_base_bytes"`
	HeapStartupBytes int64 `json:"heap_after_startup_bytes"`
	FilterBytes      int64 `json:"filter_bytes"`
	// HeapPerHost is the rest of the heap's growth at start-up over
	// hosts: the host table, names and heaps, and whatever else the state
	// holds then (the windows are empty until leasing starts), counted as
	// if per host.
	HeapPerHost float64 `json:"heap_per_host_bytes"`
	// HeapLeaseBytes is the live heap after the lease phase, and
	// WindowBytes its growth since start-up: the windows (at most
	// frontier.Options.WindowBudget items, however many hosts) and the
	// buffers leasing keeps.
	HeapLeaseBytes int64 `json:"heap_after_lease_bytes"`
	WindowBytes    int64 `json:"window_bytes"`
	// Start-up by part (node.OpenTimes).
	StartupStoreSeconds    float64 `json:"startup_store_s"`
	StartupSeenSeconds     float64 `json:"startup_seen_s"`
	StartupFiltersSeconds  float64 `json:"startup_filters_s"`
	StartupFrontierSeconds float64 `json:"startup_frontier_s"`
}

// Projection is Project's answer: what a node holding URLs queued or seen
// over Hosts would need, by linear extension of a Footprint.
type Projection struct {
	URLs  int64 `json:"urls"`
	Hosts int64 `json:"hosts"`
	// RAM is what is live: FixedBytes (what the run's RSS after start-up
	// held beyond the filters and the per-host heap: Pebble's cache and
	// memtables, the runtime) + WindowBytes (as measured) + FilterBytes +
	// HostBytes. Between collections the Go heap (all but the fixed part)
	// may grow to twice its live size, as far as the soft limit lets it
	// (internal/memlimit: 80% of the memory).
	RAMBytes    int64 `json:"ram_bytes"`
	FixedBytes  int64 `json:"fixed_bytes"`
	WindowBytes int64 `json:"window_bytes"`
	FilterBytes int64 `json:"filter_bytes"` // three filters, each sized for URLs at 1% (--expected-urls URLs)
	HostBytes   int64 `json:"host_bytes"`   // HeapPerHost x Hosts
	// DiskBytes is a queue key and a seen key per URL and a host record
	// per host (no URL records, WARC files or logs), as the run's keys
	// compressed; RawDiskBytes the same uncompressed (see
	// Footprint.RawQueueBytesPerURL).
	DiskBytes    int64 `json:"disk_bytes"`
	RawDiskBytes int64 `json:"raw_disk_bytes"`
	// StartupSeconds reads every key again: the run's start-up time per
	// URL (its parts run side by side), times URLs, and scaled for the
	// keys a crawl has that the bench has not: a URL record and a payload
	// digest per URL, read as fast as the seen keys (the scale is the
	// parts' time with two more seen scans over their time without).
	StartupSeconds float64 `json:"startup_s"`
}

// Project extends r's measured footprint to urls URLs over hosts hosts.
func Project(r Result, urls, hosts int64) Projection {
	p := Projection{URLs: urls, Hosts: hosts}
	f := r.Footprint
	measuredHosts := f.HeapPerHost * float64(r.Hosts)
	p.FixedBytes = max(0, r.RSSStartupBytes-f.FilterBytes-int64(measuredHosts))
	p.FilterBytes = 3 * urlseen.FilterSize(uint(urls), urlseen.DefaultFalsePositiveRate)
	p.HostBytes = int64(f.HeapPerHost * float64(hosts))
	p.WindowBytes = f.WindowBytes
	p.RAMBytes = p.FixedBytes + p.WindowBytes + p.FilterBytes + p.HostBytes
	p.DiskBytes = int64((f.DiskQueueBytesPerURL+f.DiskSeenBytesPerURL)*float64(urls) + f.DiskHostBytesPerHost*float64(hosts))
	p.RawDiskBytes = int64((f.RawQueueBytesPerURL+f.RawSeenBytesPerURL)*float64(urls) + f.DiskHostBytesPerHost*float64(hosts))
	if parts := f.StartupSeenSeconds + f.StartupFrontierSeconds; r.URLs > 0 && parts > 0 {
		scale := (parts + 2*f.StartupSeenSeconds) / parts
		perURL := max(0, r.StartupSeconds-f.StartupStoreSeconds) / float64(r.URLs)
		p.StartupSeconds = f.StartupStoreSeconds + perURL*scale*float64(urls)
	}
	return p
}

// heapLive is the Go heap's live bytes after a full collection.
func heapLive() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// printFootprint writes the footprint and, if asked for, the projection.
func printFootprint(w io.Writer, r Result) {
	f := r.Footprint
	perURL := func(s float64) string { return fmt.Sprintf("%.2f µs a URL", 1e6*s/float64(max(r.URLs, 1))) }
	fmt.Fprintf(w, "footprint measured in the same run:\n")
	fmt.Fprintf(w, "  %-28s %10.1f B   (queue keys as stored, compressed; %.1f B uncompressed)\n", "disk per queued URL", f.DiskQueueBytesPerURL, f.RawQueueBytesPerURL)
	fmt.Fprintf(w, "  %-28s %10.1f B   (%.1f B uncompressed)\n", "disk per seen URL", f.DiskSeenBytesPerURL, f.RawSeenBytesPerURL)
	fmt.Fprintf(w, "  %-28s %10.1f B   (%d hosts with one)\n", "disk per host record", f.DiskHostBytesPerHost, f.HostRecords)
	fmt.Fprintf(w, "  %-28s %10.0f B   (Go heap after start-up, less the filters, over hosts)\n", "heap per host", f.HeapPerHost)
	fmt.Fprintf(w, "  %-28s %10s     (the heap's growth over the lease phase: windows, within their budget)\n", "held after leasing", mibs(f.WindowBytes))
	fmt.Fprintf(w, "  %-28s %10s     (3 filters, %.1f bits a URL)\n", "Bloom filters", mibs(f.FilterBytes), 8*float64(f.FilterBytes)/float64(max(r.URLs, 1)))
	fmt.Fprintf(w, "  %-28s store %.2f s, seen keys %.2f s (%s), URL record and digest filters %.2f s, frontier %.2f s (%s)\n", "start-up by part",
		f.StartupStoreSeconds, f.StartupSeenSeconds, perURL(f.StartupSeenSeconds), f.StartupFiltersSeconds, f.StartupFrontierSeconds, perURL(f.StartupFrontierSeconds))
	p := r.Projection
	if p == nil {
		return
	}
	fmt.Fprintf(w, "projection for %d URLs over %d hosts on one node (linear in the figures above):\n", p.URLs, p.Hosts)
	fmt.Fprintf(w, "  %-28s %10s     = fixed %s + windows %s + filters %s (sized by --expected-urls %d) + hosts %s; the heap may grow to twice between collections, up to the soft limit\n",
		"RAM, live", gibs(p.RAMBytes), mibs(p.FixedBytes), mibs(p.WindowBytes), gibs(p.FilterBytes), p.URLs, gibs(p.HostBytes))
	fmt.Fprintf(w, "  %-28s %10s     (%s uncompressed: a queue and a seen key per URL, a record per host; no URL records, WARCs or logs)\n", "disk", gibs(p.DiskBytes), gibs(p.RawDiskBytes))
	fmt.Fprintf(w, "  %-28s %10.0f s   (every seen key, queue key, URL record and digest read again, as side by side as here)\n", "start-up", p.StartupSeconds)
}

func mibs(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
func gibs(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

// keyValueBytes is the sum of the lengths of the keys of kind and their
// values, by one scan.
func keyValueBytes(db *store.DB, kind store.Kind) (int64, error) {
	it, err := db.NewIter(store.KindPrefix(kind))
	if err != nil {
		return 0, err
	}
	var n int64
	for ok := it.First(); ok; ok = it.Next() {
		n += int64(len(it.Key()) + len(it.Value()))
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("frontierbench: scan %c keys: %w", kind, err)
	}
	return n, nil
}
