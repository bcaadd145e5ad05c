// Package trawlbin builds the trawl binary (./cmd/trawl) for tests that
// run it as a child process: once per test process, however many tests
// ask, into a temporary directory that Clean removes. A package using it
// calls Clean after its tests, from TestMain (Main does both).
//
// The build has no -race: the crawler's speed matters to these tests,
// its races are other tests' business.
package trawlbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once sync.Once
	dir  string // the temporary directory holding the binary
	bin  string
	err  error
)

// Build returns the path of the trawl binary, building it on the first
// call; a failed build fails every test that asks.
func Build(t testing.TB) string {
	t.Helper()
	once.Do(func() { bin, err = build() })
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Clean removes the binary Build built, if any.
func Clean() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// Main runs the tests, removes the binary and returns m.Run's exit code:
// a TestMain of os.Exit(trawlbin.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	Clean()
	return code
}

func build() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go command not on PATH: %w", err)
	}
	if dir, err = os.MkdirTemp("", "trawlbin-"); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "trawl")
	cmd := exec.Command(gobin, "build", "-o", path, "./cmd/trawl")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/trawl: %w\n%s", err, out)
	}
	return path, nil
}

// moduleRoot walks up from the working directory to the directory of go.mod.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod in %s or above", wd)
		}
	}
}
