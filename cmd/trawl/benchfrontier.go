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

	"github.com/trawl-crawler/trawl/internal/bench/frontierbench"
)

// benchFrontierArgs are `trawl bench frontier`'s flags.
type benchFrontierArgs struct {
	c                                             frontierbench.Config
	data, cpuProfile, memProfile, leaseMemProfile string
	keep, asJSON                                  bool
}

func (a *benchFrontierArgs) register(fset *flag.FlagSet) {
	c := &a.c
	fset.IntVar(&c.URLs, "urls", 10_000_000, "URLs to enqueue")
	fset.IntVar(&c.Hosts, "hosts", 1_000_000, "hosts the URLs are spread over (URL i is on host i mod H)")
	fset.IntVar(&c.Batch, "batch", 1000, "URLs per seen-check batch and frontier.Add")
	fset.IntVar(&c.Workers, "workers", 0, "goroutines per phase (0: GOMAXPROCS)")
	fset.IntVar(&c.Known, "known", 0, "known URLs to re-check (0: urls/10)")
	fset.IntVar(&c.Leases, "leases", 0, "leases to take and complete (0: urls/10)")
	fset.IntVar(&c.InFlight, "inflight", 64, "uncommitted changes each worker keeps in flight")
	fset.StringVar(&a.data, "data", "", "directory for the store; must be missing or empty (default: a temporary directory)")
	fset.BoolVar(&a.keep, "keep", false, "keep the data directory at the end")
	fset.BoolVar(&a.asJSON, "json", false, "print one JSON object instead of a table")
	fset.StringVar(&a.cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	fset.StringVar(&c.ProfilePhase, "profile-phase", "", "profile only this phase: seen-new, enqueue, seen-known, startup or lease (default: the whole run)")
	fset.StringVar(&a.memProfile, "memprofile", "", "write a heap profile, taken with N URLs queued, to this file")
	fset.StringVar(&a.leaseMemProfile, "memprofile-lease", "", "write a heap profile, taken after the lease+complete phase, to this file")
}

const benchFrontierHelp = `usage: trawl bench frontier [flags]

Opens a node's durable state (store, URL-seen gate, frontier) in --data as
the node does, fills it with synthetic URLs and measures seen-checks,
enqueue, RSS, start-up and lease+complete, phase by phase, against their
ceilings: a table, or with --json one object.

Examples:
  trawl bench frontier
  trawl bench frontier --urls 1000000 --hosts 100000 --json
  trawl bench frontier --profile-phase lease --cpuprofile lease.pprof`

// benchFrontier runs "trawl bench frontier": the phases of
// frontierbench.Run on a store in --data (default: a temporary directory,
// removed at the end), printed as a table or, with --json, as one
// frontierbench.Result.
func benchFrontier(args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("bench frontier", benchFrontierHelp, nil, stderr)
	var a benchFrontierArgs
	a.register(fset)
	if _, code, ok := parseFlags(fset, args, nil, stderr); !ok {
		return code
	}
	c := a.c
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
	c.Dir = filepath.Join(a.data, "state")
	if err := c.Validate(); err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
		return 2
	}
	if a.data == "" {
		dir, err := os.MkdirTemp("", "trawl-bench-frontier-")
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		a.data = dir
	} else if err := emptyOrMissing(a.data); err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: --data: %v\n", err)
		return 2
	}
	if !a.keep {
		defer os.RemoveAll(a.data)
	}
	c.Dir = filepath.Join(a.data, "state")

	// Profiles: the whole process unless a phase is named, then Run's.
	if a.cpuProfile != "" {
		f, err := os.Create(a.cpuProfile)
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
	if a.memProfile != "" {
		f, err := os.Create(a.memProfile)
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		defer f.Close()
		c.HeapProfile = f
	}
	if a.leaseMemProfile != "" {
		f, err := os.Create(a.leaseMemProfile)
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
	if a.asJSON {
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
