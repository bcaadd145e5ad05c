package frontierbench

import (
	"bytes"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/internal/store/urlseen"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestURLAt(t *testing.T) {
	tests := []struct {
		i, hosts  int
		url, host string
	}{
		{0, 1, "http://h0000000.bench.test/p/0", "h0000000.bench.test"},
		{12345, 1000, "http://h0000345.bench.test/p/12345", "h0000345.bench.test"},
		{123456789, 100_000_000, "http://h23456789.bench.test/p/123456789", "h23456789.bench.test"},
	}
	for _, tt := range tests {
		url, host := urlAt(tt.i, tt.hosts)
		if url != tt.url || host != tt.host {
			t.Errorf("urlAt(%d, %d) = %q, %q, want %q, %q", tt.i, tt.hosts, url, host, tt.url, tt.host)
		}
	}
}

// small is a valid Config of a tiny run in dir.
func small(dir string) Config {
	return Config{Dir: dir, URLs: 2000, Hosts: 70, Batch: 128, Workers: 3, Known: 200, Leases: 300, InFlight: 8}
}

func TestValidate(t *testing.T) {
	if err := small("d").Validate(); err != nil {
		t.Fatalf("Validate of a valid Config = %v", err)
	}
	c := Config{Hosts: -1, ProfilePhase: "nope"}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate of a zero Config = nil")
	}
	for _, want := range []string{"Dir is empty", "URLs = 0", "Hosts = -1", "Batch = 0", "Workers = 0", "Known = 0", "Leases = 0", "InFlight = 0", `ProfilePhase = "nope"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %q, lacks %q", err, want)
		}
	}
	c = small("d")
	c.CPUProfile = io.Discard
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "ProfilePhase is empty") {
		t.Errorf("Validate with CPUProfile and no ProfilePhase = %v", err)
	}
}

// TestRun runs every phase on a tiny frontier, profiling one phase, and
// checks the counts; a second run on the same store is refused.
func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	c := small(dir)
	var cpu, heap, leaseHeap, progress bytes.Buffer
	c.ProfilePhase, c.CPUProfile, c.HeapProfile, c.LeaseHeapProfile = "lease", &cpu, &heap, &leaseHeap
	r, err := Run(c, &progress)
	if err != nil {
		t.Fatalf("Run = %v\nprogress:\n%s", err, progress.String())
	}
	want := Result{URLs: 2000, Hosts: 70, Workers: 3, Batch: 128, SeenNewChecked: 2000, SeenKnownChecked: 200, LeaseCompleted: 300}
	got := Result{URLs: r.URLs, Hosts: r.Hosts, Workers: r.Workers, Batch: r.Batch, SeenNewChecked: r.SeenNewChecked, SeenKnownChecked: r.SeenKnownChecked, LeaseCompleted: r.LeaseCompleted}
	if got != want {
		t.Errorf("Run counts = %+v, want %+v", got, want)
	}
	for name, v := range map[string]float64{"SeenNewPerSec": r.SeenNewPerSec, "SeenKnownPerSec": r.SeenKnownPerSec, "EnqueuePerSec": r.EnqueuePerSec, "LeaseCompletePerS": r.LeaseCompletePerS, "StartupSeconds": r.StartupSeconds, "StoreBytes": float64(r.StoreBytes),
		"FsyncsPerSec": r.FsyncsPerSec, "IngestPerSec": r.IngestPerSec, "CompletePerSec": r.CompletePerSec,
		"DiskQueueBytesPerURL": r.DiskQueueBytesPerURL, "DiskSeenBytesPerURL": r.DiskSeenBytesPerURL, "DiskHostBytesPerHost": r.DiskHostBytesPerHost,
		"RawQueueBytesPerURL": r.RawQueueBytesPerURL, "RawSeenBytesPerURL": r.RawSeenBytesPerURL,
		"HostRecords": float64(r.HostRecords), "HeapStartupBytes": float64(r.HeapStartupBytes), "FilterBytes": float64(r.FilterBytes),
		"StartupSeenSeconds": r.StartupSeenSeconds, "StartupFrontierSeconds": r.StartupFrontierSeconds} {
		if v <= 0 {
			t.Errorf("Result.%s = %v, want > 0", name, v)
		}
	}
	for _, want := range []string{"2000 new URLs", "enqueue of 2000", "200 known URLs", "restart with 2000", "lease+complete of 300", "ceilings"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	if r.Projection != nil {
		t.Errorf("Projection = %+v with no ProjectURLs, want nil", r.Projection)
	}
	if r.HostRecords > 70 {
		t.Errorf("HostRecords = %d, want at most the 70 hosts", r.HostRecords)
	}
	if cpu.Len() == 0 || heap.Len() == 0 || leaseHeap.Len() == 0 {
		t.Errorf("profiles: CPU %d bytes, heap %d bytes, heap after leasing %d bytes, want all > 0", cpu.Len(), heap.Len(), leaseHeap.Len())
	}

	if _, err := Run(small(dir), io.Discard); err == nil || !strings.Contains(err.Error(), "want an empty one") {
		t.Errorf("Run on a used store = %v, want a refusal", err)
	}
}

// TestProject: the projection is the measured footprint, linear in URLs
// and hosts, with the fixed part kept.
func TestProject(t *testing.T) {
	r := Result{URLs: 1000, Hosts: 100, RSSStartupBytes: 100 << 20, StartupSeconds: 0.5 + 0.002}
	r.Footprint = Footprint{
		DiskQueueBytesPerURL: 30, DiskSeenBytesPerURL: 20, DiskHostBytesPerHost: 40,
		RawQueueBytesPerURL: 90, RawSeenBytesPerURL: 60,
		FilterBytes: 1 << 20, HeapPerHost: 1000, WindowBytes: 5 << 20,
		StartupStoreSeconds: 0.5, StartupSeenSeconds: 0.001, StartupFrontierSeconds: 0.002,
	}
	p := Project(r, 1_000_000, 10_000)
	if want := int64(100<<20 - 1<<20 - 100*1000); p.FixedBytes != want {
		t.Errorf("FixedBytes = %d, want %d (RSS less filters less hosts)", p.FixedBytes, want)
	}
	if p.HostBytes != 10_000*1000 {
		t.Errorf("HostBytes = %d, want %d", p.HostBytes, 10_000*1000)
	}
	if want := 3 * urlseen.FilterSize(1_000_000, urlseen.DefaultFalsePositiveRate); p.FilterBytes != want {
		t.Errorf("FilterBytes = %d, want %d", p.FilterBytes, want)
	}
	if p.WindowBytes != 5<<20 || p.RAMBytes != p.FixedBytes+p.WindowBytes+p.FilterBytes+p.HostBytes {
		t.Errorf("RAMBytes = %d, want the sum of its parts", p.RAMBytes)
	}
	if want := int64(50*1_000_000 + 40*10_000); p.DiskBytes != want {
		t.Errorf("DiskBytes = %d, want %d", p.DiskBytes, want)
	}
	if want := int64(150*1_000_000 + 40*10_000); p.RawDiskBytes != want {
		t.Errorf("RawDiskBytes = %d, want %d", p.RawDiskBytes, want)
	}
	// The run: 2 µs a URL, its parts (seen 1 µs, frontier 2 µs) side by
	// side; with URL records and digests read as fast as the seen keys the
	// parts take 5 µs instead of 3.
	if want := 0.5 + 2e-6*5.0/3.0*1_000_000; math.Abs(p.StartupSeconds-want) > 1e-9 {
		t.Errorf("StartupSeconds = %v, want %v", p.StartupSeconds, want)
	}
	var out bytes.Buffer
	r.Projection = &p
	Print(&out, r)
	for _, want := range []string{"disk per queued URL", "heap per host", "projection for 1000000 URLs over 10000 hosts", "RAM, live", "held after leasing", "start-up"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Print lacks %q:\n%s", want, out.String())
		}
	}
}
