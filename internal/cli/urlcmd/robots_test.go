package urlcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRobotsCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "robots.txt")
	body := "User-agent: *\nDisallow: /private/\nAllow: /private/ok\nbogus line\n\nUser-agent: other\nDisallow: /\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.txt")

	tests := []struct {
		name      string
		args      []string
		code      int
		stdout    string
		stderrHas []string
	}{
		{
			name: "check",
			args: []string{"check", file, "trawl", "https://h.test/", "https://h.test/private/x", "/private/ok?a=1", "http://h.test/robots.txt"},
			code: 0,
			stdout: "allowed\thttps://h.test/\n" +
				"disallowed\thttps://h.test/private/x\n" +
				"allowed\t/private/ok?a=1\n" +
				"allowed\thttp://h.test/robots.txt\n",
			stderrHas: []string{file + ": line 4: no colon"},
		},
		{
			name:   "agent group",
			args:   []string{"check", file, "OTHER", "https://h.test/"},
			code:   0,
			stdout: "disallowed\thttps://h.test/\n",
		},
		{
			name:      "bad URL keeps going",
			args:      []string{"check", file, "trawl", "https://h.test/a", "ftp://h.test/x", "http://h.test/%zz", "relative", "/private/y"},
			code:      1,
			stdout:    "allowed\thttps://h.test/a\ndisallowed\t/private/y\n",
			stderrHas: []string{`bad URL "ftp://h.test/x"`, `bad URL "http://h.test/%zz"`, `bad URL "relative"`},
		},
		{
			name:      "unreadable file",
			args:      []string{"check", missing, "trawl", "/"},
			code:      1,
			stderrHas: []string{"missing.txt"},
		},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := Robots{File: tt.args[1], Agent: tt.args[2], URLs: tt.args[3:]}.Main(&stdout, &stderr)
		if code != tt.code {
			t.Errorf("%s: trawl robots %q = %d, want %d (stderr %q)", tt.name, tt.args, code, tt.code, stderr.String())
		}
		if stdout.String() != tt.stdout {
			t.Errorf("%s: trawl robots %q stdout = %q, want %q", tt.name, tt.args, stdout.String(), tt.stdout)
		}
		for _, s := range tt.stderrHas {
			if !strings.Contains(stderr.String(), s) {
				t.Errorf("%s: trawl robots %q stderr = %q, want it to contain %q", tt.name, tt.args, stderr.String(), s)
			}
		}
	}
}
