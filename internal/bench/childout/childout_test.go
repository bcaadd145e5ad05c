package childout

import "testing"

func TestLastLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb", 5, "a\nb"},
		{"", 1, ""},
	} {
		if got := LastLines(c.in, c.n); got != c.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	var b Buffer
	b.Write([]byte("x\n"))
	b.Write([]byte("y\n"))
	if b.String() != "x\ny\n" {
		t.Errorf("Buffer = %q", b.String())
	}
}
