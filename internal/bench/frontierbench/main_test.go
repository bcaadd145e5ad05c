package frontierbench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flagDefaults are trawl bench frontier's defaults.
func flagDefaults() Options {
	return Options{Config: Config{URLs: 10_000_000, Hosts: 1_000_000, Batch: 1000, InFlight: 64}}
}

// TestBenchFrontierJSON runs every phase on a tiny frontier and checks the
// JSON object: the fields it documents are present and plausible.
func TestBenchFrontierJSON(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	var out, errb bytes.Buffer
	o := flagDefaults()
	o.URLs, o.Hosts, o.Batch, o.Data, o.JSON = 3000, 70, 128, data, true
	code := Main(o, &out, &errb)
	if code != 0 {
		t.Fatalf("Main = %d\nstderr:\n%s", code, errb.String())
	}
	var fields map[string]float64
	if err := json.Unmarshal(out.Bytes(), &fields); err != nil {
		t.Fatalf("output is not one JSON object of numbers: %v\n%s", err, out.String())
	}
	for _, name := range []string{"seen_new_per_s", "seen_known_per_s", "enqueue_per_s", "lease_complete_per_s", "rss_bytes", "startup_s"} {
		v, ok := fields[name]
		if !ok || v <= 0 {
			t.Errorf("field %q = %v (present %v), want > 0", name, v, ok)
		}
	}
	for name, want := range map[string]float64{"urls": 3000, "hosts": 70, "seen_new_checked": 3000, "seen_known_checked": 300, "lease_completed": 300} {
		if fields[name] != want {
			t.Errorf("field %q = %v, want %v", name, fields[name], want)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("data directory %s left behind without --keep (stat: %v)", data, err)
	}
}

// TestBenchFrontierTable checks the table names every measurement and that
// --keep leaves the store behind.
func TestBenchFrontierTable(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	var out, errb bytes.Buffer
	o := flagDefaults()
	o.URLs, o.Hosts, o.Leases, o.Data, o.Keep = 500, 9, 500, data, true
	code := Main(o, &out, &errb)
	if code != 0 {
		t.Fatalf("Main = %d\nstderr:\n%s", code, errb.String())
	}
	for _, want := range []string{"500 URLs over 9 hosts", "seen-check, new URLs", "seen-check, known URLs", "enqueue", "lease+complete", "RSS, N queued", "start-up, N queued"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(data, "state")); err != nil {
		t.Errorf("--keep: store gone: %v", err)
	}
}

func TestBenchFrontierFlagErrors(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		flags string
		set   func(*Options)
		want  string
	}{
		{"--urls 0", func(o *Options) { o.URLs = 0 }, "URLs = 0"},
		{"--hosts -1 --batch 0", func(o *Options) { o.Hosts, o.Batch = -1, 0 }, "Batch = 0"},
		{"--hosts -1", func(o *Options) { o.Hosts = -1 }, "Hosts = -1"},
		{"--profile-phase nope", func(o *Options) { o.ProfilePhase = "nope" }, `ProfilePhase = "nope"`},
		{"--data FULL", func(o *Options) { o.Data = full }, "is not empty"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		o := flagDefaults()
		tt.set(&o)
		code := Main(o, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("bench frontier %s = %d, stderr %q, want 2 and %q", tt.flags, code, errb.String(), tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(full, "x")); err != nil {
		t.Errorf("refused --data directory was touched: %v", err)
	}
}

// TestBenchFrontierProfiles checks that --cpuprofile with --profile-phase
// and --memprofile each leave a profile behind.
func TestBenchFrontierProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	var out, errb bytes.Buffer
	o := flagDefaults()
	o.URLs, o.Hosts, o.Data, o.CPUProfile, o.ProfilePhase, o.MemProfile = 500, 9, filepath.Join(dir, "data"), cpu, "enqueue", mem
	code := Main(o, &out, &errb)
	if code != 0 {
		t.Fatalf("Main = %d\nstderr:\n%s", code, errb.String())
	}
	for _, p := range []string{cpu, mem} {
		if info, err := os.Stat(p); err != nil || info.Size() == 0 {
			t.Errorf("profile %s: stat %v, want a non-empty file", p, err)
		}
	}
}
