// Package testimage makes the images that tests send: PNGs of a given
// size, plain (a few hundred bytes, whatever the size) or of noise (some
// four bytes a pixel, as a photograph is large).
package testimage

import (
	"bytes"
	"image"
	"image/png"
	"math/rand/v2"
	"testing"
)

// Plain is a gray PNG of w × h pixels.
func Plain(t testing.TB, w, h int) []byte {
	t.Helper()
	return encode(t, image.NewGray(image.Rect(0, 0, w, h)))
}

// Noise is a PNG of w × h pixels of noise, the same at every call, which
// compresses badly: some w × h × 4 bytes.
func Noise(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	return encode(t, img)
}

func encode(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatalf("testimage: %v", err)
	}
	return b.Bytes()
}
