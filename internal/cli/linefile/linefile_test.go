package linefile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestHosts(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(p, []byte("# comment\n127.0.0.2 a.test B.test\n127.0.0.3 c.test\n"), 0o644)
	m, err := Hosts(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m["b.test"][0].String() != "127.0.0.2" || m["c.test"][0].String() != "127.0.0.3" {
		t.Errorf("Hosts = %v", m)
	}
	os.WriteFile(p, []byte("# hosts\n127.0.0.2\nnot-an-ip a.test\n"), 0o644)
	_, err = Hosts(p)
	if err == nil || !strings.Contains(err.Error(), "line 2:") || !strings.Contains(err.Error(), "line 3:") {
		t.Errorf("bad hosts file: err = %v, want it to name lines 2 and 3", err)
	}
	if _, err := Hosts(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Hosts(a missing file): no error")
	}
}

func TestLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "seeds")
	os.WriteFile(p, []byte("  http://a.test/  \n\n# a comment\nhttp://b.test/\n"), 0o644)
	got, err := Lines(p)
	if want := []string{"http://a.test/", "http://b.test/"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Lines = %q, %v; want %q", got, err, want)
	}
	if _, err := Lines(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Lines(a missing file): no error")
	}
}
