package testimage

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"testing"
)

// JPEG is a gray JPEG of w × h pixels.
func JPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatalf("testimage: %v", err)
	}
	return b.Bytes()
}

// GIF is a GIF of w × h pixels.
func GIF(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatalf("testimage: %v", err)
	}
	return b.Bytes()
}

// WebP is the header of a WebP of w × h pixels in the extended format (a
// VP8X chunk). That is all that is read of one. It is a whole file as far
// as its RIFF header tells, without the image data.
func WebP(w, h int) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(4+8+10))
	b.WriteString("WEBPVP8X")
	_ = binary.Write(&b, binary.LittleEndian, uint32(10))
	b.Write([]byte{0, 0, 0, 0})
	put24 := func(v int) { b.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16)}) }
	put24(w - 1)
	put24(h - 1)
	return b.Bytes()
}
