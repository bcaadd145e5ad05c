package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCmdURL(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantOut    string
		wantErrHas string // substring of stderr; "" means stderr must be empty
		wantCode   int
	}{
		{
			name:     "args",
			args:     []string{"normalize", "HTTP://Example.COM:80/a/./b/../c?utm_source=x&b=2&a=1#frag", "https://bücher.example"},
			wantOut:  "http://example.com/a/c?a=1&b=2\nhttps://xn--bcher-kva.example/\n",
			wantCode: 0,
		},
		{
			name:     "base",
			args:     []string{"normalize", "--base", "https://example.com/dir/page.html", "../up?x=1", "other.html#top"},
			wantOut:  "https://example.com/up?x=1\nhttps://example.com/dir/other.html\n",
			wantCode: 0,
		},
		{
			name:     "invalid lines keep their place",
			args:     []string{"normalize", "http://a.test/", "mailto:x@a.test", "relative", "http://b.test/"},
			wantOut:  "http://a.test/\ninvalid: urlnorm: parse \"mailto:x@a.test\": scheme \"mailto\" is not http or https\ninvalid: urlnorm: parse \"relative\": missing scheme (a relative reference needs a base URL)\nhttp://b.test/\n",
			wantCode: 1,
		},
		{
			name:     "stdin",
			args:     []string{"normalize", "-base", "http://a.test/x/"},
			stdin:    "y\nhttp://B.test:80\njavascript:void(0)\n",
			wantOut:  "http://a.test/x/y\nhttp://b.test/\ninvalid: urlnorm: parse \"javascript:void(0)\": scheme \"javascript\" is not http or https\n",
			wantCode: 1,
		},
		{name: "no subcommand", args: nil, wantErrHas: "usage: trawl url normalize", wantCode: 2},
		{name: "unknown subcommand", args: []string{"explode"}, wantErrHas: `unknown subcommand "explode"`, wantCode: 2},
		{name: "unknown flag", args: []string{"normalize", "--nope", "http://a.test/"}, wantErrHas: "flag provided but not defined", wantCode: 2},
		{name: "bad base", args: []string{"normalize", "--base", "ftp://a.test/", "x"}, wantErrHas: `--base: urlnorm: parse "ftp://a.test/"`, wantCode: 2},
		{name: "help", args: []string{"normalize", "-h"}, wantErrHas: "-base URL", wantCode: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := urlStdin
			urlStdin = strings.NewReader(tt.stdin)
			defer func() { urlStdin = old }()
			var stdout, stderr bytes.Buffer
			code := cmdURL(tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("cmdURL(%q) exit = %d, want %d (stderr %q)", tt.args, code, tt.wantCode, stderr.String())
			}
			if got := stdout.String(); got != tt.wantOut {
				t.Errorf("cmdURL(%q) stdout = %q, want %q", tt.args, got, tt.wantOut)
			}
			if tt.wantErrHas == "" && stderr.Len() > 0 {
				t.Errorf("cmdURL(%q) stderr = %q, want empty", tt.args, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErrHas) {
				t.Errorf("cmdURL(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.wantErrHas)
			}
		})
	}
}

func TestURLRegistered(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"url", "normalize", "http://A.test"}, &stdout, &stderr); code != 0 || stdout.String() != "http://a.test/\n" {
		t.Errorf("run(url normalize http://A.test) = %d, %q, want 0, %q", code, stdout.String(), "http://a.test/\n")
	}
}
