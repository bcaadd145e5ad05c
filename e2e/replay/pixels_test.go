package replay

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
)

// pixelTolerance is the largest difference in any channel (0-255) under
// which two pixels count as the same: it absorbs antialiasing that a
// compositor may round differently, while a missing image, a fallback
// font or an unstyled block differs by far more.
const pixelTolerance = 16

// diff compares two screenshots of the same size: the number of pixels
// that differ by more than pixelTolerance in some channel, and an image
// showing them in red over a faded copy of a.
func diff(aPNG, bPNG []byte) (differing, total int, out []byte, err error) {
	a, err := png.Decode(bytes.NewReader(aPNG))
	if err != nil {
		return 0, 0, nil, fmt.Errorf("decode first screenshot: %w", err)
	}
	b, err := png.Decode(bytes.NewReader(bPNG))
	if err != nil {
		return 0, 0, nil, fmt.Errorf("decode second screenshot: %w", err)
	}
	if a.Bounds().Size() != b.Bounds().Size() {
		return 0, 0, nil, fmt.Errorf("screenshots of %v and %v", a.Bounds().Size(), b.Bounds().Size())
	}
	r := a.Bounds()
	d := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	off := b.Bounds().Min.Sub(r.Min)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ca := color.NRGBAModel.Convert(a.At(x, y)).(color.NRGBA)
			cb := color.NRGBAModel.Convert(b.At(x+off.X, y+off.Y)).(color.NRGBA)
			dx, dy := x-r.Min.X, y-r.Min.Y
			if far(ca.R, cb.R) || far(ca.G, cb.G) || far(ca.B, cb.B) || far(ca.A, cb.A) {
				differing++
				d.SetNRGBA(dx, dy, color.NRGBA{255, 0, 0, 255})
				continue
			}
			g := uint8((int(ca.R)+int(ca.G)+int(ca.B))/3/4 + 190)
			d.SetNRGBA(dx, dy, color.NRGBA{g, g, g, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, d); err != nil {
		return 0, 0, nil, err
	}
	return differing, r.Dx() * r.Dy(), buf.Bytes(), nil
}

func far(a, b uint8) bool {
	if a > b {
		return a-b > pixelTolerance
	}
	return b-a > pixelTolerance
}
