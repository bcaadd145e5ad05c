package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

	"github.com/trawl-crawler/trawl/internal/frontierbench"
)

// benchFrontier runs "trawl bench frontier": the phases of
// frontierbench.Run on a store in --data (default: a temporary directory,
// removed at the end), printed as a table or, with --json, as one
// frontierbench.Result.
func benchFrontier(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("bench frontier", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var c frontierbench.Config
	fset.IntVar(&c.URLs, "urls", 10_000_000, "URLs to enqueue")
	fset.IntVar(&c.Hosts, "hosts", 1_000_000, "hosts the URLs are spread over (URL i is on host i mod H)")
	fset.IntVar(&c.Batch, "batch", 1000, "URLs per seen-check batch and frontier.Add")
	fset.IntVar(&c.Workers, "workers", 0, "goroutines per phase (0: GOMAXPROCS)")
	fset.IntVar(&c.Known, "known", 0, "known URLs to re-check (0: urls/10)")
	fset.IntVar(&c.Leases, "leases", 0, "leases to take and complete (0: urls/10)")
	fset.IntVar(&c.InFlight, "inflight", 64, "uncommitted changes each worker keeps in flight")
	data := fset.String("data", "", "directory for the store; must be missing or empty (default: a temporary directory)")
	keep := fset.Bool("keep", false, "keep the data directory at the end")
	asJSON := fset.Bool("json", false, "print one JSON object instead of a table")
	cpuProfile := fset.String("cpuprofile", "", "write a CPU profile to this file")
	fset.StringVar(&c.ProfilePhase, "profile-phase", "", "profile only this phase: seen-new, enqueue, seen-known, startup or lease (default: the whole run)")
	memProfile := fset.String("memprofile", "", "write a heap profile, taken with N URLs queued, to this file")
	leaseMemProfile := fset.String("memprofile-lease", "", "write a heap profile, taken after the lease+complete phase, to this file")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Known == 0 {
		c.Known = max(1, c.URLs/10)
	}
	if c.Leases == 0 {
		c.Leases = max(1, c.URLs/10)
	}
	// Validate before touching the file system; with no --data, Dir is
	// set again once the temporary directory exists.
	c.Dir = filepath.Join(*data, "state")
	if err := c.Validate(); err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
		return 2
	}
	if *data == "" {
		dir, err := os.MkdirTemp("", "trawl-bench-frontier-")
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		*data = dir
	} else if err := emptyOrMissing(*data); err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: --data: %v\n", err)
		return 2
	}
	if !*keep {
		defer os.RemoveAll(*data)
	}
	c.Dir = filepath.Join(*data, "state")

	// Profiles: the whole process unless a phase is named, then Run's.
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		defer f.Close()
		if c.ProfilePhase != "" {
			c.CPUProfile = f
		} else if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		} else {
			defer pprof.StopCPUProfile()
		}
	}
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		defer f.Close()
		c.HeapProfile = f
	}
	if *leaseMemProfile != "" {
		f, err := os.Create(*leaseMemProfile)
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		defer f.Close()
		c.LeaseHeapProfile = f
	}

	r, err := frontierbench.Run(c, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
		return 1
	}
	if *asJSON {
		json.NewEncoder(stdout).Encode(r)
		return 0
	}
	frontierbench.Print(stdout, r)
	return 0
}

// emptyOrMissing fails if dir holds anything: the bench needs a fresh store
// and removes the directory at the end.
func emptyOrMissing(dir string) error {
	names, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(names) > 0:
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}
