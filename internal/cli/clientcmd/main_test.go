package clientcmd

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientToken: where the clients find the API token, first match
// wins: --token-file or TRAWL_TOKEN_FILE, TRAWL_TOKEN, token-file in the
// config file, DATA/api.token, ./trawl-data/api.token on loopback only.
func TestClientToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o600)
		return p
	}
	flagFile := write("flag.token", "from-flag-file\n")
	confFile := write("conf.token", "from-config-file")
	write("data/api.token", "from-data-dir\n")
	emptyFile := write("empty.token", " \n")
	data := filepath.Join(dir, "data")
	tests := []struct {
		name       string
		tokenFile  string
		fromConfig bool   // the token file came from the config file
		env        string // TRAWL_TOKEN
		data       string
		server     string
		want       string
		err        string
	}{
		{"token file from the flag or TRAWL_TOKEN_FILE beats TRAWL_TOKEN", flagFile, false, "from-env", data, "", "from-flag-file", ""},
		{"TRAWL_TOKEN beats a config file's token file", confFile, true, "from-env", data, "", "from-env", ""},
		{"the config file's token file beats the data dir", confFile, true, "", data, "", "from-config-file", ""},
		{"the data dir's api.token", "", false, "", data, "http://10.0.0.5:8420", "from-data-dir", ""},
		{"a data dir without api.token: none", "", false, "", dir, "", "", ""},
		{"no --data, a server elsewhere: none", "", false, "", "", "http://10.0.0.5:8420", "", ""},
		{"a named file that is missing", filepath.Join(dir, "nope"), false, "", data, "", "", "nope"},
		{"a named file that is empty", emptyFile, false, "", data, "", "", "empty"},
	}
	for _, tt := range tests {
		o := Options{TokenFile: tt.tokenFile, TokenFileFromConfig: tt.fromConfig, Data: tt.data, Server: cmp.Or(tt.server, "http://127.0.0.1:8420")}
		got, _, err := o.token(func(k string) string {
			if k == "TRAWL_TOKEN" {
				return tt.env
			}
			return ""
		})
		if got != tt.want || (err != nil) != (tt.err != "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: token = %q, %v; want %q, error %q", tt.name, got, err, tt.want, tt.err)
		}
	}
	for _, c := range []struct {
		url  string
		want bool
	}{{"http://127.0.0.1:8420", true}, {"http://localhost", true}, {"https://[::1]:1/", true}, {"http://10.0.0.5:8420", false}, {"http://crawler:8420", false}, {"nonsense", false}} {
		if got := loopbackURL(c.url); got != c.want {
			t.Errorf("loopbackURL(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}
