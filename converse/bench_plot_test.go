package converse_test

// The plot of BenchmarkScale, drawn with image/draw and x/image's
// basicfont. The module already depends on x/image; gonum/plot v0.17.0
// would add about ten modules (gonum, fonts, a LaTeX renderer, PDF and SVG
// back ends) for two panels of points and bars.

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"maps"
	"math"
	"os"
	"slices"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The best published figures we know of, a Rust agent runtime's: about
// 170 KB an agent, about 1,000 runs a second at 32 concurrent.
const (
	benchPublishedKB          = 170
	benchPublishedRate        = 1000
	benchPublishedConcurrency = 32
)

var (
	benchInk    = color.RGBA{0x20, 0x20, 0x20, 0xff}
	benchGrid   = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	benchOurs   = color.RGBA{0x1f, 0x5f, 0xbf, 0xff}
	benchTheirs = color.RGBA{0xc0, 0x30, 0x30, 0xff}
)

// benchCanvas is an image with the few strokes a plot needs.
type benchCanvas struct{ img *image.RGBA }

func (c benchCanvas) text(x, y int, s string, col color.Color) {
	d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// textRight draws s ending at x.
func (c benchCanvas) textRight(x, y int, s string, col color.Color) {
	c.text(x-7*len(s), y, s, col)
}

func (c benchCanvas) fill(r image.Rectangle, col color.Color) {
	draw.Draw(c.img, r, image.NewUniform(col), image.Point{}, draw.Src)
}

// line draws a line two pixels wide; dash, if not 0, is the length of its
// dashes and of the gaps between them.
func (c benchCanvas) line(from, to image.Point, col color.Color, dash int) {
	steps := max(benchAbs(to.X-from.X), benchAbs(to.Y-from.Y), 1)
	for i := 0; i <= steps; i++ {
		if dash > 0 && (i/dash)%2 == 1 {
			continue
		}
		x := from.X + (to.X-from.X)*i/steps
		y := from.Y + (to.Y-from.Y)*i/steps
		c.fill(image.Rect(x, y, x+2, y+2), col)
	}
}

func benchAbs(n int) int { return max(n, -n) }

// hollowSquare marks the published figure at pt.
func (c benchCanvas) hollowSquare(pt image.Point) {
	corners := []image.Point{{-5, -5}, {5, -5}, {5, 5}, {-5, 5}, {-5, -5}}
	for i := 1; i < len(corners); i++ {
		c.line(pt.Add(corners[i-1]), pt.Add(corners[i]), benchTheirs, 0)
	}
}

// benchPanel is a plot area whose y axis runs from 0 to ymax.
type benchPanel struct {
	r    image.Rectangle
	ymax float64
}

func (p benchPanel) y(v float64) int {
	return p.r.Max.Y - int(v/p.ymax*float64(p.r.Dy()))
}

// benchCeiling is a round number at least v: 1, 2 or 5 times a power of ten.
func benchCeiling(v float64) float64 {
	step := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*step {
			return m * step
		}
	}
	return 10 * step
}

// axes draws the panel's frame, its title, and five gridlines labelled
// with their values.
func (c benchCanvas) axes(p benchPanel, title string) {
	for i := 0; i <= 5; i++ {
		v := p.ymax * float64(i) / 5
		y := p.y(v)
		c.line(image.Pt(p.r.Min.X, y), image.Pt(p.r.Max.X, y), benchGrid, 0)
		c.textRight(p.r.Min.X-6, y+4, fmt.Sprintf("%.0f", v), benchInk)
	}
	c.line(p.r.Min, image.Pt(p.r.Min.X, p.r.Max.Y), benchInk, 0)
	c.line(image.Pt(p.r.Min.X, p.r.Max.Y), p.r.Max, benchInk, 0)
	c.text(p.r.Min.X, p.r.Min.Y-14, title, benchInk)
}

// throughput draws conversations a second against concurrency, on a log
// scale, with the published figure as a hollow square, named in a legend
// where no point goes.
func (c benchCanvas) throughput(r image.Rectangle, rates map[int]float64) {
	top := float64(benchPublishedRate)
	for _, v := range rates {
		top = max(top, v)
	}
	p := benchPanel{r, benchCeiling(top * 1.1)}
	c.axes(p, "conversations per second (2-turn tool exchange, loopback)")
	x := func(n int) int { return r.Min.X + 20 + int(math.Log10(float64(n))/3*float64(r.Dx()-40)) }
	var last image.Point
	for i, n := range slices.Sorted(maps.Keys(rates)) {
		pt := image.Pt(x(n), p.y(rates[n]))
		if i > 0 {
			c.line(last, pt, benchOurs, 0)
		}
		c.fill(image.Rect(pt.X-4, pt.Y-4, pt.X+5, pt.Y+5), benchOurs)
		c.text(pt.X-14, pt.Y-10, fmt.Sprintf("%.0f", rates[n]), benchOurs)
		c.text(pt.X-3*len(fmt.Sprint(n)), r.Max.Y+18, fmt.Sprint(n), benchInk)
		last = pt
	}
	c.hollowSquare(image.Pt(x(benchPublishedConcurrency), p.y(benchPublishedRate)))
	c.hollowSquare(image.Pt(r.Min.X+14, r.Max.Y-16))
	c.text(r.Min.X+26, r.Max.Y-12, "published Rust runtime, 32 concurrent", benchTheirs)
	c.text(r.Min.X+r.Dx()/2-84, r.Max.Y+34, "concurrent conversations", benchInk)
}

// memory draws the KB an idle and an active conversation hold as bars,
// with the published figure as a dashed line.
func (c benchCanvas) memory(r image.Rectangle, idleKB, activeKB float64) {
	p := benchPanel{r, benchCeiling(max(idleKB, activeKB, benchPublishedKB) * 1.1)}
	c.axes(p, "KB per conversation")
	w := r.Dx() / 5
	for i, bar := range []struct {
		name string
		kb   float64
	}{{"idle", idleKB}, {"active", activeKB}} {
		x := r.Min.X + w*(2*i+1)
		c.fill(image.Rect(x, p.y(bar.kb), x+w, r.Max.Y), benchOurs)
		c.text(x, p.y(bar.kb)-6, fmt.Sprintf("%.1f", bar.kb), benchOurs)
		c.text(x+w/2-7*len(bar.name)/2, r.Max.Y+18, bar.name, benchInk)
	}
	y := p.y(benchPublishedKB)
	c.line(image.Pt(r.Min.X, y), image.Pt(r.Max.X, y), benchTheirs, 6)
	c.text(r.Min.X+4, y-6, "published Rust runtime", benchTheirs)
}

// writeBenchPlot draws BenchmarkScale's figures into the PNG file path.
func writeBenchPlot(path string, fig benchScaleFigures) error {
	c := benchCanvas{image.NewRGBA(image.Rect(0, 0, 960, 440))}
	c.fill(c.img.Bounds(), color.White)
	c.throughput(image.Rect(70, 40, 560, 370), fig.convPerSec)
	c.memory(image.Rect(660, 40, 930, 370), fig.idleKB, fig.activeKB)
	c.text(10, 430, "BenchmarkScale (converse/scale_bench_test.go); bedrocktest in the same process", benchInk)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, c.img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
