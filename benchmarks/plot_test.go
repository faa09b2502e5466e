package benchmarks_test

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/zksim/zksim/benchmarks"
)

var herdReplot = flag.Bool("herd.replot", false, "TestHerdPlotCommitted: redraw herd.svg from the committed herd.json instead of comparing")

// replot draws the plot of the committed herd.json.
func replot(t *testing.T) []byte {
	t.Helper()
	f, err := os.Open("herd.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := benchmarks.ReadHerdJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := benchmarks.HerdRowsSVG(&svg, rep.Results, herdSubtitle(rep.CostModel)); err != nil {
		t.Fatal(err)
	}
	return svg.Bytes()
}

// TestHerdPlotCommitted checks that the committed herd.svg is what the
// renderer draws from the committed herd.json. With -herd.replot it
// writes it instead (no measuring: that is TestHerdReport's job):
//
//	go test ./benchmarks -run TestHerdPlotCommitted -herd.replot
func TestHerdPlotCommitted(t *testing.T) {
	got := replot(t)
	if *herdReplot {
		if err := os.WriteFile("herd.svg", got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("wrote herd.svg")
		return
	}
	want, err := os.ReadFile("herd.svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("herd.svg is not what herd.json draws; run go test ./benchmarks -run TestHerdPlotCommitted -herd.replot")
	}
}

// svgNode is any element of the plot, with what the checks read.
type svgNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []svgNode  `xml:",any"`
}

func (n svgNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// walk calls f on n and every element below it.
func (n svgNode) walk(f func(svgNode)) {
	f(n)
	for _, c := range n.Nodes {
		c.walk(f)
	}
}

// TestHerdPlotSeries checks, in the committed herd.svg, that every panel
// shows all five variants so that none hides another: each series has its
// own colour, dash pattern and marker, and no two series share a point.
// It also checks that every N label lies inside the image.
func TestHerdPlotSeries(t *testing.T) {
	data, err := os.ReadFile("herd.svg")
	if err != nil {
		t.Fatal(err)
	}
	checkPlot(t, data, len(benchmarks.Variants))
}

// TestHerdPlotSeriesCatchesOverlap draws a plot in which two variants
// have the same figures and checks that the markers are still apart; and
// feeds checkPlot a plot whose two series coincide, which it must reject.
func TestHerdPlotSeriesCatchesOverlap(t *testing.T) {
	var rows []benchmarks.HerdRow
	for _, v := range []string{"election-predecessor", "lock-predecessor"} {
		for _, n := range []int{10, 100, 1000, 10000} {
			rows = append(rows, benchmarks.HerdRow{Variant: v, N: n, Notifications: 1, Reads: 3, ReplyBytes: 100, FailoverNanos: 2e5})
		}
	}
	var svg bytes.Buffer
	if err := benchmarks.HerdRowsSVG(&svg, rows, "test"); err != nil {
		t.Fatal(err)
	}
	checkPlot(t, svg.Bytes(), 2)

	// The same plot with the second series moved onto the first.
	var doc svgNode
	if err := xml.Unmarshal(svg.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	bad := svg.String()
	doc.walk(func(n svgNode) {
		if n.attr("class") != "panel" {
			return
		}
		s := series(n)
		bad = strings.Replace(bad, s[1].points, s[0].points, 1)
	})
	if problems := plotProblems(t, []byte(bad), 2); len(problems) == 0 {
		t.Fatal("checkPlot accepts two series drawn on the same points")
	}
}

// checkPlot fails t with plotProblems.
func checkPlot(t *testing.T, data []byte, variants int) {
	t.Helper()
	for _, p := range plotProblems(t, data, variants) {
		t.Error(p)
	}
}

type seriesInfo struct {
	variant, color, dash, marker, points string
}

// series lists the series of a panel.
func series(panel svgNode) []seriesInfo {
	var out []seriesInfo
	panel.walk(func(n svgNode) {
		if n.attr("class") != "series" {
			return
		}
		s := seriesInfo{variant: n.attr("data-variant"), marker: n.attr("data-marker")}
		for _, c := range n.Nodes {
			if c.XMLName.Local == "polyline" {
				s.color, s.dash, s.points = c.attr("stroke"), c.attr("stroke-dasharray"), c.attr("points")
			}
		}
		out = append(out, s)
	})
	return out
}

// plotProblems lists what is wrong with the plot: a panel without the
// given number of series, two series of a panel alike in colour, dash
// pattern or marker, two series with a point in the same place, an N
// label that does not fit in the image.
func plotProblems(t *testing.T, data []byte, variants int) []string {
	t.Helper()
	var doc svgNode
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("herd.svg: %v", err)
	}
	width, err := strconv.ParseFloat(doc.attr("width"), 64)
	if err != nil {
		t.Fatalf("svg width: %v", err)
	}
	var problems []string
	panels := 0
	doc.walk(func(n svgNode) {
		if n.attr("class") == "xtick" {
			x, err := strconv.ParseFloat(n.attr("x"), 64)
			half := 3.5 * float64(len(n.Text)) // 7 px a digit at 12 px
			if err != nil || x-half < 4 || x+half > width-4 {
				problems = append(problems, fmt.Sprintf("N label %q at x=%s does not fit in the image (width %.0f)", n.Text, n.attr("x"), width))
			}
		}
		if n.attr("class") != "panel" {
			return
		}
		panels++
		title := n.attr("data-metric")
		s := series(n)
		if len(s) != variants {
			problems = append(problems, fmt.Sprintf("panel %q: %d series, want %d", title, len(s), variants))
		}
		type point struct {
			x, y    float64
			variant string
		}
		var seen []point
		for i, a := range s {
			if a.points == "" || a.color == "" || a.marker == "" {
				problems = append(problems, fmt.Sprintf("panel %q: series %s has no points, colour or marker", title, a.variant))
			}
			for _, b := range s[:i] {
				if a.color == b.color || a.dash == b.dash || a.marker == b.marker {
					problems = append(problems, fmt.Sprintf("panel %q: %s and %s share a colour, dash pattern or marker (%v, %v)", title, a.variant, b.variant, a, b))
				}
			}
			for _, f := range strings.Fields(a.points) {
				var p point
				if _, err := fmt.Sscanf(f, "%g,%g", &p.x, &p.y); err != nil {
					problems = append(problems, fmt.Sprintf("panel %q: %s: bad point %q", title, a.variant, f))
					continue
				}
				p.variant = a.variant
				for _, q := range seen {
					// Markers are about 9 px across: closer than 5 px
					// centre to centre, one covers the other.
					if q.variant != p.variant && math.Hypot(p.x-q.x, p.y-q.y) < 5 {
						problems = append(problems, fmt.Sprintf("panel %q: %s at %s covers %s at %.1f,%.1f", title, p.variant, f, q.variant, q.x, q.y))
					}
				}
				seen = append(seen, p)
			}
		}
	})
	if panels != 4 {
		problems = append(problems, fmt.Sprintf("%d panels, want 4", panels))
	}
	return problems
}
