package urlcmd

import (
	"bytes"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name       string
		base       string // --base
		args       []string
		stdin      string
		wantOut    string
		wantErrHas string // substring of stderr; "" means stderr must be empty
		wantCode   int
	}{
		{
			name:     "args",
			args:     []string{"HTTP://Example.COM:80/a/./b/../c?utm_source=x&b=2&a=1#frag", "https://bücher.example"},
			wantOut:  "http://example.com/a/c?a=1&b=2\nhttps://xn--bcher-kva.example/\n",
			wantCode: 0,
		},
		{
			name:     "base",
			base:     "https://example.com/dir/page.html",
			args:     []string{"../up?x=1", "other.html#top"},
			wantOut:  "https://example.com/up?x=1\nhttps://example.com/dir/other.html\n",
			wantCode: 0,
		},
		{
			name:     "invalid lines keep their place",
			args:     []string{"http://a.test/", "mailto:x@a.test", "relative", "http://b.test/"},
			wantOut:  "http://a.test/\ninvalid: urlnorm: parse \"mailto:x@a.test\": scheme \"mailto\" is not http or https\ninvalid: urlnorm: parse \"relative\": missing scheme (a relative reference needs a base URL)\nhttp://b.test/\n",
			wantCode: 1,
		},
		{
			name:     "stdin",
			base:     "http://a.test/x/",
			stdin:    "y\nhttp://B.test:80\njavascript:void(0)\n",
			wantOut:  "http://a.test/x/y\nhttp://b.test/\ninvalid: urlnorm: parse \"javascript:void(0)\": scheme \"javascript\" is not http or https\n",
			wantCode: 1,
		},
		{name: "bad base", base: "ftp://a.test/", args: []string{"x"}, wantErrHas: `--base: urlnorm: parse "ftp://a.test/"`, wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Normalize{Base: tt.base, URLs: tt.args, Stdin: strings.NewReader(tt.stdin)}.Main(&stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("trawl url normalize %q exit = %d, want %d (stderr %q)", tt.args, code, tt.wantCode, stderr.String())
			}
			if got := stdout.String(); got != tt.wantOut {
				t.Errorf("trawl url normalize %q stdout = %q, want %q", tt.args, got, tt.wantOut)
			}
			if tt.wantErrHas == "" && stderr.Len() > 0 {
				t.Errorf("trawl url normalize %q stderr = %q, want empty", tt.args, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErrHas) {
				t.Errorf("trawl url normalize %q stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.wantErrHas)
			}
		})
	}
}
