package benchmarks

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// HerdTable writes the results as a markdown table: one row per variant and
// N, with the mean cost of one leader change.
func HerdTable(out io.Writer, results []HerdResult) error {
	var b strings.Builder
	b.WriteString("| variant | N | notifications / change | reads / change | bytes returned / change | writes / change | failover (virtual) | changes |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range results {
		n, rd, by, wr, f := r.Mean()
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %d |\n",
			r.Variant, group(int64(r.N)), num(n), num(rd), bytesText(by), num(wr), durText(f), len(r.Changes))
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// num prints a mean count: an integer when it is one, else one decimal.
func num(x float64) string {
	if x == math.Trunc(x) {
		return group(int64(x))
	}
	if x >= 100 {
		return group(int64(math.Round(x)))
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// group prints n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + group(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func bytesText(x float64) string {
	switch {
	case x >= 1e9:
		return strconv.FormatFloat(x/1e9, 'f', 2, 64) + " GB"
	case x >= 1e6:
		return strconv.FormatFloat(x/1e6, 'f', 2, 64) + " MB"
	case x >= 1e3:
		return strconv.FormatFloat(x/1e3, 'f', 1, 64) + " kB"
	}
	return strconv.FormatFloat(x, 'f', 0, 64) + " B"
}

func durText(d time.Duration) string {
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 0, 64) + " µs"
}

// metric is one panel of the plot.
type metric struct {
	title string
	value func(HerdResult) float64
	label func(float64) string
}

var metrics = []metric{
	{"watch notifications per leader change", func(r HerdResult) float64 { n, _, _, _, _ := r.Mean(); return n }, func(x float64) string { return num(x) }},
	{"reads per leader change", func(r HerdResult) float64 { _, rd, _, _, _ := r.Mean(); return rd }, func(x float64) string { return num(x) }},
	{"bytes returned per leader change", func(r HerdResult) float64 { _, _, by, _, _ := r.Mean(); return by }, bytesText},
	{"failover time (virtual, cost model)", func(r HerdResult) float64 {
		_, _, _, _, f := r.Mean()
		return float64(f)
	}, func(x float64) string { return durText(time.Duration(x)) }},
}

// variantColors gives each variant a colour; predecessor variants are solid
// lines, the others dashed.
var variantColors = map[string]string{
	"election-predecessor": "#1b7837",
	"election-herd":        "#c51b7d",
	"election-single-node": "#e08214",
	"lock-predecessor":     "#2166ac",
	"lock-herd":            "#762a83",
}

// HerdSVG writes the results as an SVG image: one log-log panel per metric
// (N across, the metric up), one line per variant. The subtitle may hold
// two or three lines, separated by newlines.
func HerdSVG(out io.Writer, results []HerdResult, subtitle string) error {
	const (
		panelW, panelH = 460, 300
		left, right    = 70, 20
		top, bottom    = 40, 45
		cols           = 2
		legendRowH     = 22
		headerH        = 75
	)
	rows := (len(metrics) + cols - 1) / cols
	width := cols * panelW
	var variants []string
	seen := map[string]bool{}
	for _, r := range results {
		if !seen[r.Variant] {
			seen[r.Variant] = true
			variants = append(variants, r.Variant)
		}
	}
	// One legend entry per row: the descriptions are too long for two
	// columns.
	height := headerH + rows*panelH + 20 + len(variants)*legendRowH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="16" text-anchor="middle">The herd effect: cost of one leader change with N waiting candidates (log-log)</text>`+"\n", width/2)
	for i, line := range strings.Split(subtitle, "\n") {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="middle" fill="#555">%s</text>`+"\n", width/2, 42+15*i, escape(line))
	}
	for mi, m := range metrics {
		x0 := (mi % cols) * panelW
		y0 := headerH + (mi/cols)*panelH
		plotPanel(&b, m, results, variants, x0+left, y0+top, panelW-left-right, panelH-top-bottom)
	}
	// Legend.
	ly := headerH + rows*panelH + 10
	for i, v := range variants {
		x := 30
		y := ly + i*legendRowH
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"%s/>`+"\n", x, y, x+40, y, colorOf(v), dashOf(v))
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x+50, y+4, escape(legendText(v)))
	}
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

func colorOf(v string) string {
	if c, ok := variantColors[v]; ok {
		return c
	}
	return "#333333"
}

// dashOf draws predecessor variants solid, herd variants dashed and the
// single-node election dotted (its notification curve is the same as the
// herd election's: both lines stay visible).
func dashOf(v string) string {
	switch {
	case strings.HasSuffix(v, "-predecessor"):
		return ""
	case strings.HasSuffix(v, "-single-node"):
		return ` stroke-dasharray="2 4" stroke-linecap="round"`
	}
	return ` stroke-dasharray="9 5"`
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// plotPanel draws one metric in the rectangle at (x, y) of size w×h, log
// scales on both axes.
func plotPanel(b *strings.Builder, m metric, results []HerdResult, variants []string, x, y, w, h int) {
	minN, maxN := math.Inf(1), math.Inf(-1)
	minV, maxV := math.Inf(1), math.Inf(-1)
	for _, r := range results {
		minN, maxN = math.Min(minN, float64(r.N)), math.Max(maxN, float64(r.N))
		if v := m.value(r); v > 0 {
			minV, maxV = math.Min(minV, v), math.Max(maxV, v)
		}
	}
	if math.IsInf(minN, 0) || math.IsInf(minV, 0) {
		return
	}
	// Whole decades around the data.
	lx0, lx1 := math.Floor(math.Log10(minN)), math.Ceil(math.Log10(maxN))
	ly0, ly1 := math.Floor(math.Log10(minV)), math.Ceil(math.Log10(maxV))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	px := func(n float64) float64 { return float64(x) + (math.Log10(n)-lx0)/(lx1-lx0)*float64(w) }
	py := func(v float64) float64 { return float64(y+h) - (math.Log10(v)-ly0)/(ly1-ly0)*float64(h) }
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x+w/2, y-12, escape(m.title))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", x, y, w, h)
	for e := lx0; e <= lx1; e++ {
		n := math.Pow(10, e)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e5e5e5"/>`+"\n", px(n), y, px(n), y+h)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(n), y+h+16, group(int64(n)))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="#555">N (candidates)</text>`+"\n", x+w/2, y+h+34)
	for e := ly0; e <= ly1; e++ {
		v := math.Pow(10, e)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`+"\n", x, py(v), x+w, py(v))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", x-5, py(v)+4, escape(m.label(v)))
	}
	for _, name := range variants {
		var pts []string
		for _, r := range results {
			if r.Variant != name {
				continue
			}
			if v := m.value(r); v > 0 {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(float64(r.N)), py(v)))
			}
		}
		if len(pts) == 0 {
			continue
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2.5"%s/>`+"\n", strings.Join(pts, " "), colorOf(name), dashOf(name))
		for _, p := range pts {
			xy := strings.Split(p, ",")
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.5" fill="%s"/>`+"\n", xy[0], xy[1], colorOf(name))
		}
	}
}

// herdJSONRow is one result in herd.json.
type herdJSONRow struct {
	Variant       string  `json:"variant"`
	N             int     `json:"n"`
	Notifications float64 `json:"notifications_per_change"`
	Reads         float64 `json:"reads_per_change"`
	ReplyBytes    float64 `json:"bytes_per_change"`
	Writes        float64 `json:"writes_per_change"`
	FailoverNanos int64   `json:"failover_ns"`
	Changes       int     `json:"changes"`
}

// HerdJSON writes the results as JSON (what cmd/zksim reads): the cost
// model and, per variant and N, the mean cost of one leader change.
func HerdJSON(out io.Writer, results []HerdResult) error {
	doc := struct {
		CostModel string        `json:"cost_model"`
		Results   []herdJSONRow `json:"results"`
	}{CostModel: CostModelDescription()}
	for _, r := range results {
		n, rd, by, wr, f := r.Mean()
		doc.Results = append(doc.Results, herdJSONRow{
			Variant: r.Variant, N: r.N, Notifications: n, Reads: rd, ReplyBytes: by, Writes: wr,
			FailoverNanos: int64(f), Changes: len(r.Changes),
		})
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
