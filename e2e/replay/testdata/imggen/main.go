// Command imggen draws the site's images (testdata/site/img/*.png) once;
// they are committed, and this stays so that they can be drawn again:
//
//	cd e2e/replay/testdata && go run ./imggen
//
// The drawings are plain shapes, no randomness: the same bytes each run.
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
	"path/filepath"
)

type shader func(x, y, w, h int) color.NRGBA

func draw(name string, w, h int, f shader) {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, f(x, y, w, h))
		}
	}
	out, err := os.Create(filepath.Join("site", "img", name))
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(out, img); err != nil {
		log.Fatal(err)
	}
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}
}

func rgb(r, g, b uint8) color.NRGBA { return color.NRGBA{r, g, b, 255} }

// boat: sky, sea with a wave line, a hull and a sail; s scales it.
func boat(x, y, w, h int) color.NRGBA {
	fx, fy := float64(x)/float64(w), float64(y)/float64(h)
	sea := 0.62 + 0.03*math.Sin(fx*6*math.Pi)
	switch {
	case fy > 0.52 && fy < 0.62 && fx > 0.3 && fx < 0.7 && fy-0.52 < (fx-0.3)*0.5 && fy-0.52 < (0.7-fx)*0.5+0.02:
		return rgb(120, 60, 30) // hull
	case fx > 0.48 && fx < 0.5 && fy > 0.15 && fy <= 0.52:
		return rgb(90, 60, 40) // mast
	case fx >= 0.5 && fy > 0.18 && fy < 0.5 && fx-0.5 < (fy-0.18)*0.6:
		return rgb(250, 245, 230) // sail
	case fy > sea:
		return rgb(20, uint8(80+40*fy), uint8(140+60*fy))
	default:
		return rgb(uint8(150+80*fy), uint8(190+50*fy), 245)
	}
}

func main() {
	// A paper tile for the body's background.
	draw("paper.png", 24, 24, func(x, y, w, h int) color.NRGBA {
		if (x+y)%12 == 0 || (x-y+24)%12 == 0 {
			return rgb(236, 228, 210)
		}
		return rgb(247, 242, 230)
	})
	// A band of waves for the header's background (base.css).
	draw("waves.png", 48, 40, func(x, y, w, h int) color.NRGBA {
		c := 20 + 6*math.Sin(float64(x)/float64(w)*2*math.Pi)
		if math.Abs(float64(y)-c) < 3 {
			return rgb(180, 215, 235)
		}
		return rgb(24, 74, 120)
	})
	draw("boat-320.png", 320, 160, boat)
	draw("boat-640.png", 640, 320, boat)
	// The crest, large (<picture> source) and small (its fallback <img>).
	crest := func(fill color.NRGBA) shader {
		return func(x, y, w, h int) color.NRGBA {
			dx, dy := float64(x)-float64(w)/2+0.5, float64(y)-float64(h)/2+0.5
			r := math.Hypot(dx, dy) / (float64(w) / 2)
			switch {
			case r > 1:
				return color.NRGBA{}
			case r > 0.86:
				return rgb(200, 160, 40)
			case math.Abs(dx) < float64(w)*0.06 || math.Abs(dy) < float64(h)*0.06:
				return rgb(250, 250, 250)
			default:
				return fill
			}
		}
	}
	draw("crest.png", 120, 120, crest(rgb(150, 30, 40)))
	draw("crest-small.png", 60, 60, crest(rgb(30, 120, 60)))
	// An oar for the about page's inline style.
	draw("oars.png", 200, 40, func(x, y, w, h int) color.NRGBA {
		switch {
		case x > 150 && math.Abs(float64(y-20)) < 14:
			return rgb(200, 40, 40)
		case math.Abs(float64(y-20)) < 3:
			return rgb(140, 100, 60)
		default:
			return color.NRGBA{}
		}
	})
}
