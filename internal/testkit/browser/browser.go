// Package browser gives browser tests what they share: Debian's chromium,
// the directory their screenshots go to, and the repository's root. For
// tests only.
package browser

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ChromiumPath is the chromium on PATH; the test fails without one
// (scripts/test.sh installs Debian's package).
func ChromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: install it (apt-get install -y chromium; scripts/test.sh does)")
	return ""
}

// ArtifactDir is where a test keeps what a reviewer looks at after a
// run: $TRAWL_ARTIFACTS, else test-artifacts/ at the repository's root
// (git-ignored). It exists on return.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TRAWL_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// RepoRoot is the nearest directory up from the test's that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}
