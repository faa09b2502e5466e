package benchmarks

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// metric is one panel of the plot.
type metric struct {
	title string
	value func(HerdRow) float64
	label func(float64) string
}

var metrics = []metric{
	{"watch notifications per leader change", func(r HerdRow) float64 { return r.Notifications }, num},
	{"reads per leader change", func(r HerdRow) float64 { return r.Reads }, num},
	{"bytes returned per leader change", func(r HerdRow) float64 { return r.ReplyBytes }, bytesText},
	{"failover time (virtual, cost model)", func(r HerdRow) float64 { return float64(r.FailoverNanos) },
		func(x float64) string { return durText(time.Duration(x)) }},
}

// seriesStyle is how one variant is drawn: every variant differs from
// every other in colour, dash pattern and marker, so a series that runs on
// top of another (the two predecessor variants cost the same reads; the
// herd election and the single-node election the same notifications) can
// still be told apart.
type seriesStyle struct {
	color  string
	dash   string // stroke-dasharray; "" is a solid line
	marker string // circle, square, diamond, triangle-up, triangle-down
}

var variantStyles = map[string]seriesStyle{
	"election-predecessor": {"#1b7837", "", "circle"},
	"lock-predecessor":     {"#2166ac", "12 5", "square"},
	"election-herd":        {"#c51b7d", "6 4", "triangle-up"},
	"election-single-node": {"#e08214", "2 4", "diamond"},
	"lock-herd":            {"#762a83", "12 4 2 4", "triangle-down"},
}

// otherStyles are for variants without a style of their own, taken in
// turn.
var otherStyles = []seriesStyle{
	{"#333333", "8 3 2 3 2 3", "circle"},
	{"#8c510a", "1 3", "square"},
	{"#01665e", "16 4", "diamond"},
}

// styles returns the style of each variant, in order: its own if it has
// one, else the first of otherStyles that no variant uses yet.
func styles(variants []string) []seriesStyle {
	out := make([]seriesStyle, len(variants))
	used := map[seriesStyle]bool{}
	for i, v := range variants {
		if s, ok := variantStyles[v]; ok {
			out[i] = s
			used[s] = true
		}
	}
	next := 0
	for i, v := range variants {
		if _, ok := variantStyles[v]; ok {
			continue
		}
		for next < len(otherStyles) && used[otherStyles[next]] {
			next++
		}
		s := otherStyles[next%len(otherStyles)]
		next++
		out[i] = s
		used[s] = true
	}
	return out
}

// Plot geometry, in pixels.
const (
	panelW, panelH = 470, 310
	panelLeft      = 72 // room for the value labels
	panelRight     = 48 // keeps the last N label clear of the image's edge
	panelTop       = 40
	panelBottom    = 48
	plotCols       = 2
	legendRowH     = 22
	headerH        = 75
	// dodge is how far apart, left to right, the series are drawn at one N,
	// so that series with equal values sit side by side, not on top.
	dodge = 8
	// xPad widens the N axis by this many decades on each side, so the
	// first and last points (and their dodged neighbours) stay inside;
	// yPad does the same for the value axis, so a marker on the highest or
	// lowest value does not sit on the frame.
	xPad = 0.3
	yPad = 0.12
)

// HerdSVG writes the results as an SVG image: one log-log panel per metric
// (N across, the metric up), one line per variant. The subtitle may hold
// two or three lines, separated by newlines.
func HerdSVG(out io.Writer, results []HerdResult, subtitle string) error {
	rows := make([]HerdRow, len(results))
	for i, r := range results {
		rows[i] = r.Row()
	}
	return HerdRowsSVG(out, rows, subtitle)
}

// HerdRowsSVG draws the plot of HerdSVG from rows (the means of herd.json,
// see ReadHerdJSON).
//
// Each panel is a <g class="panel">, each variant in it a <g
// class="series" data-variant=... data-marker=...> holding its polyline
// and its markers; the tests read that structure.
func HerdRowsSVG(out io.Writer, rows []HerdRow, subtitle string) error {
	nrows := (len(metrics) + plotCols - 1) / plotCols
	width := plotCols * panelW
	var variants []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Variant] {
			seen[r.Variant] = true
			variants = append(variants, r.Variant)
		}
	}
	style := styles(variants)
	// One legend entry per row (the descriptions are too long for two
	// columns), then a line on how the series are drawn.
	legendY := headerH + nrows*panelH + 10
	height := legendY + (len(variants)+1)*legendRowH + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="16" text-anchor="middle">The herd effect: cost of one leader change with N waiting candidates (log-log)</text>`+"\n", width/2)
	for i, line := range strings.Split(subtitle, "\n") {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="middle" fill="#555">%s</text>`+"\n", width/2, 42+15*i, escape(line))
	}
	for mi, m := range metrics {
		x0 := (mi % plotCols) * panelW
		y0 := headerH + (mi/plotCols)*panelH
		plotPanel(&b, m, rows, variants, style, x0+panelLeft, y0+panelTop, panelW-panelLeft-panelRight, panelH-panelTop-panelBottom)
	}
	for i, v := range variants {
		x, y := 30, legendY+i*legendRowH
		s := style[i]
		fmt.Fprintf(&b, `<g class="legend" data-variant="%s">`, escape(v))
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5"%s/>`, x, y, x+48, y, s.color, dashAttr(s.dash))
		marker(&b, s, float64(x+24), float64(y))
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text></g>`+"\n", x+58, y+4, escape(legendText(v)))
	}
	fmt.Fprintf(&b, `<text x="30" y="%d" font-size="11" fill="#555">%s</text>`+"\n", legendY+len(variants)*legendRowH+4,
		escape(fmt.Sprintf("Every point is measured at a gridline's N; the series are drawn side by side around it (%d px apart) so that equal values stay visible.", dodge)))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(out, b.String())
	return err
}

func legendText(name string) string {
	if v, ok := VariantByName(name); ok {
		return name + ": " + v.About
	}
	return name
}

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s" stroke-linecap="butt"`, dash)
}

// marker draws s's marker centred on (x, y), filled with s's colour and
// ringed in white so that it stands out on a line.
func marker(b *strings.Builder, s seriesStyle, x, y float64) {
	const r = 4.5
	attrs := fmt.Sprintf(`fill="%s" stroke="white" stroke-width="1"`, s.color)
	switch s.marker {
	case "square":
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s/>`, x-r*0.85, y-r*0.85, 2*r*0.85, 2*r*0.85, attrs)
	case "diamond":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ" %s/>`, x, y-r*1.2, x+r*1.2, y, x, y+r*1.2, x-r*1.2, y, attrs)
	case "triangle-up":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" %s/>`, x, y-r*1.2, x+r*1.1, y+r*0.8, x-r*1.1, y+r*0.8, attrs)
	case "triangle-down":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" %s/>`, x, y+r*1.2, x+r*1.1, y-r*0.8, x-r*1.1, y-r*0.8, attrs)
	default:
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="%.1f" %s/>`, x, y, r, attrs)
	}
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// plotPanel draws one metric in the rectangle at (x, y) of size w×h, log
// scales on both axes.
func plotPanel(b *strings.Builder, m metric, rows []HerdRow, variants []string, style []seriesStyle, x, y, w, h int) {
	minN, maxN := math.Inf(1), math.Inf(-1)
	minV, maxV := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		minN, maxN = math.Min(minN, float64(r.N)), math.Max(maxN, float64(r.N))
		if v := m.value(r); v > 0 {
			minV, maxV = math.Min(minV, v), math.Max(maxV, v)
		}
	}
	if math.IsInf(minN, 0) || math.IsInf(minV, 0) {
		return
	}
	// Whole decades around the data; the N axis a little wider still.
	lx0, lx1 := math.Floor(math.Log10(minN)), math.Ceil(math.Log10(maxN))
	ly0, ly1 := math.Floor(math.Log10(minV)), math.Ceil(math.Log10(maxV))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	ax0, ax1 := lx0-xPad, lx1+xPad
	px := func(n float64) float64 { return float64(x) + (math.Log10(n)-ax0)/(ax1-ax0)*float64(w) }
	ay0, ay1 := ly0-yPad, ly1+yPad
	py := func(v float64) float64 { return float64(y+h) - (math.Log10(v)-ay0)/(ay1-ay0)*float64(h) }
	fmt.Fprintf(b, `<g class="panel" data-metric="%s">`+"\n", escape(m.title))
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x+w/2, y-12, escape(m.title))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", x, y, w, h)
	for e := lx0; e <= lx1; e++ {
		n := math.Pow(10, e)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e5e5e5"/>`+"\n", px(n), y, px(n), y+h)
		fmt.Fprintf(b, `<text class="xtick" x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(n), y+h+16, group(int64(n)))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="#555">N (candidates)</text>`+"\n", x+w/2, y+h+34)
	for e := ly0; e <= ly1; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`+"\n", x, py(v), x+w, py(v))
		fmt.Fprintf(b, `<text class="ytick" x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", x-5, py(v)+4, escape(m.label(v)))
	}
	for i, name := range variants {
		off := (float64(i) - float64(len(variants)-1)/2) * dodge
		type point struct{ x, y float64 }
		var pts []point
		for _, r := range rows {
			if r.Variant != name {
				continue
			}
			if v := m.value(r); v > 0 {
				pts = append(pts, point{px(float64(r.N)) + off, py(v)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		s := style[i]
		fmt.Fprintf(b, `<g class="series" data-variant="%s" data-marker="%s">`, escape(name), s.marker)
		var coords []string
		for _, p := range pts {
			coords = append(coords, fmt.Sprintf("%.1f,%.1f", p.x, p.y))
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2.5"%s/>`, strings.Join(coords, " "), s.color, dashAttr(s.dash))
		for _, p := range pts {
			marker(b, s, p.x, p.y)
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</g>\n")
}
