package css

import (
	"strings"
	"testing"
)

func BenchmarkRefs(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 400; i++ {
		sb.WriteString(`.btn-primary:hover, .nav > li.active a { color: #fff; background-color: rgba(0,0,0,.5); border: 1px solid transparent; font-family: "Helvetica Neue", Arial, sans-serif; content: "\201C"; }
@media (min-width: 768px) { .container { max-width: 720px; padding-left: calc(1rem + 2px); } }
.hero { background: url(/img/hero.png) no-repeat center / cover; }
`)
	}
	src := []byte(sb.String())
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Refs(src, 0)
	}
}
