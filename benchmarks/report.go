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

// HerdRow is the mean cost of one leader change for one variant and N: a
// row of herd.json, and what the plot draws.
type HerdRow struct {
	Variant       string  `json:"variant"`
	N             int     `json:"n"`
	Notifications float64 `json:"notifications_per_change"`
	Reads         float64 `json:"reads_per_change"`
	ReplyBytes    float64 `json:"bytes_per_change"`
	Writes        float64 `json:"writes_per_change"`
	FailoverNanos int64   `json:"failover_ns"`
	Changes       int     `json:"changes"`
}

// Row returns the mean cost of one of r's changes.
func (r HerdResult) Row() HerdRow {
	n, rd, by, wr, f := r.Mean()
	return HerdRow{
		Variant: r.Variant, N: r.N, Notifications: n, Reads: rd, ReplyBytes: by, Writes: wr,
		FailoverNanos: int64(f), Changes: len(r.Changes),
	}
}

// HerdReport is the content of herd.json: the cost model the figures were
// measured under and one row per variant and N.
type HerdReport struct {
	CostModel string    `json:"cost_model"`
	Results   []HerdRow `json:"results"`
}

// HerdJSON writes the results as JSON (from which the plot can be drawn
// again): the cost model and, per variant and N, the mean cost of one
// leader change.
func HerdJSON(out io.Writer, results []HerdResult) error {
	doc := HerdReport{CostModel: CostModelDescription()}
	for _, r := range results {
		doc.Results = append(doc.Results, r.Row())
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// ReadHerdJSON reads what HerdJSON wrote, so the plot can be drawn again
// without measuring again.
func ReadHerdJSON(in io.Reader) (HerdReport, error) {
	var doc HerdReport
	if err := json.NewDecoder(in).Decode(&doc); err != nil {
		return HerdReport{}, fmt.Errorf("reading herd.json: %w", err)
	}
	return doc, nil
}
