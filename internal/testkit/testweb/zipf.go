package testweb

import (
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
)

// The near-duplicate web's words (neardup.go): a vocabulary of
// zipfWords words drawn with Zipf-like frequencies, so that its text has
// the shape of language (a few words on every line, most words rare)
// rather than the uniform noise of the small vocabulary above. The
// commonest ranks are English function words, then the content words of
// vocabulary, then made-up words built from syllables; rank r is drawn
// with weight 1/(r+zipfShift), Mandelbrot's form of Zipf's law with
// exponent 1, under which the first hundred words make up about half of
// all text, as in English.
const (
	zipfWords = 20000
	zipfShift = 2.7
)

// functionWords are common English function words, commonest first
// (roughly; the order only shapes the frequencies).
var functionWords = strings.Fields(`
	the of and to a in is that it was for on are as with his they at be
	this from have or by one had not but what all were when we there can
	an your which their said if do will each about how up out them then
	she many some so these would other into has more her two like him see
	time could no make than first been its who now people my made over did
	down only way find use may water long little very after words called
	just where most know get through back much before go good new write our
	used me man too any day same right look think also around another came
	come work three must because does part even place well such here take
	why help put different away again off went old number great tell men
	say small every found still between name should home big give air line
	set own under read last never us left end along while might next sound
	below saw something thought both few those always show large often
	together asked house world going want school important until form food
	keep children feet land side without boy once animal life enough took
	four head above kind began almost live page got earth need far hand high
	year mother light country father let night picture being study second
	soon story since white ever paper hard near sentence better best across
	during today however sure knew try told young sun thing whole hear
	example heard several change answer room sea against top turned learn
	point city play toward five himself usually money seen car morning
`)

// zipfVocab is the vocabulary in rank order and the cumulative weights
// of its ranks.
type zipfVocab struct {
	words []string
	cum   []float64
}

// nearVocab builds the vocabulary once: its made-up words come from a
// fixed seed, so it is the same in every process.
var nearVocab = sync.OnceValue(func() *zipfVocab {
	seen := make(map[string]bool, zipfWords)
	z := &zipfVocab{words: make([]string, 0, zipfWords), cum: make([]float64, 0, zipfWords)}
	add := func(w string) {
		if !seen[w] && len(z.words) < zipfWords {
			seen[w] = true
			z.words = append(z.words, w)
		}
	}
	for _, w := range functionWords {
		add(w)
	}
	for _, w := range vocabulary {
		add(w)
	}
	onsets := strings.Fields("b bl br c ch cl cr d dr f fl fr g gl gr h j k l m n p pl pr qu r s sc sh sk sl sp st str t th tr v w wh y z")
	vowels := strings.Fields("a e i o u a e i o ai ea ee oa oo ou ie")
	codas := append([]string{"", "", ""}, strings.Fields("n r s t l m nd nt st ck ng rd sh th ll ss")...)
	rng := rand.New(rand.NewPCG(0x7a69_7066, 0x776f_7264))
	for len(z.words) < zipfWords {
		var b strings.Builder
		syllables := 1 // 35%, two 50%, three 15%
		switch n := rng.IntN(20); {
		case n >= 17:
			syllables = 3
		case n >= 7:
			syllables = 2
		}
		for range syllables {
			b.WriteString(onsets[rng.IntN(len(onsets))])
			b.WriteString(vowels[rng.IntN(len(vowels))])
			b.WriteString(codas[rng.IntN(len(codas))])
		}
		if w := b.String(); !strings.Contains(w, "fuck") && !strings.Contains(w, "shit") && !strings.Contains(w, "cunt") {
			add(w)
		}
	}
	sum := 0.0
	for r := range z.words {
		sum += 1 / (float64(r) + zipfShift)
		z.cum = append(z.cum, sum)
	}
	return z
})

// draw returns a word at random with Zipf-like odds.
func (z *zipfVocab) draw(rng *rand.Rand) string {
	x := rng.Float64() * z.cum[len(z.cum)-1]
	i := sort.SearchFloat64s(z.cum, x)
	return z.words[min(i, len(z.words)-1)]
}

// drawNot returns a word at random with Zipf-like odds, other than not.
func (z *zipfVocab) drawNot(rng *rand.Rand, not string) string {
	for {
		if w := z.draw(rng); w != not {
			return w
		}
	}
}

// zipfText returns n words drawn from seed.
func zipfText(seed uint64, n int) []string {
	z, rng := nearVocab(), rand.New(rand.NewPCG(seed, 11))
	out := make([]string, n)
	for i := range out {
		out[i] = z.draw(rng)
	}
	return out
}
