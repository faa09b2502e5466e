package sim

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// CoverageKey is a cell of a coverage report: the requests of op under the
// area (the first component of their path: a recipe's directory, such as
// "/lock") that met fault. Fault "" counts every request applied.
type CoverageKey struct {
	Area  string
	Op    zkmem.OpCode
	Fault string
}

// Coverage counts which requests met which faults: the request faults
// that struck them (LoseReply, DropRequest, Shuffle, Slow), the failures
// they got from a broken connection (ConnectionLoss, SessionExpired), and
// the step faults that struck their client while they were in flight
// (sent, not yet answered: Disconnect, Expire, Pause, Delay, and
// AuthFailed when its reconnection failed authentication). A blind spot,
// say a multi that never lost its reply, shows as a zero.
type Coverage map[CoverageKey]int

// Coverage returns what the World's requests met so far (nothing with
// Config.NoTrace). The map is the World's: Add it to a total rather than
// keep it.
func (w *World) Coverage() Coverage { return w.cover }

// Add adds the counts of o to c.
func (c Coverage) Add(o Coverage) {
	for k, n := range o {
		c[k] += n
	}
}

// coverageFaults are the report's columns, in order; others found are
// added after them.
var coverageFaults = []string{"LoseReply", "DropRequest", "ConnectionLoss", "SessionExpired", "Shuffle", "Slow", "Disconnect", "Expire", "Pause", "Delay", "AuthFailed"}

// String prints c as a table: a row per area and op, a column per fault,
// the first column the number of requests.
func (c Coverage) String() string {
	type row struct {
		area string
		op   zkmem.OpCode
	}
	rows := map[row]bool{}
	cols := slices.Clone(coverageFaults)
	for k := range c {
		rows[row{k.Area, k.Op}] = true
		if k.Fault != "" && !slices.Contains(cols, k.Fault) {
			cols = append(cols, k.Fault)
		}
	}
	keys := make([]row, 0, len(rows))
	for r := range rows {
		keys = append(keys, r)
	}
	slices.SortFunc(keys, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.area, b.area), cmp.Compare(a.op.String(), b.op.String()))
	})
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "area\top\trequests\t")
	for _, f := range cols {
		fmt.Fprintf(tw, "%s\t", f)
	}
	fmt.Fprintln(tw)
	for _, r := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%d\t", r.area, r.op, c[CoverageKey{r.area, r.op, ""}])
		for _, f := range cols {
			fmt.Fprintf(tw, "%d\t", c[CoverageKey{r.area, r.op, f}])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	return b.String()
}

// area returns the first component of p ("/lock" for "/lock/x").
func area(p string) string {
	if i := strings.IndexByte(p[min(1, len(p)):], '/'); i >= 0 {
		return p[:i+1]
	}
	return p
}

// coverApplied counts req, applied, and the faults that struck it.
func (w *World) coverApplied(req *request) {
	if w.cover == nil || req.name == opExternal {
		return
	}
	k := CoverageKey{Area: area(req.desc.Path), Op: req.desc.Op}
	w.cover[k]++
	hit := func(f string) {
		k.Fault = f
		w.cover[k]++
	}
	switch req.hit {
	case zkmem.LoseReply:
		hit("LoseReply")
	case zkmem.DropRequest:
		hit("DropRequest")
	default:
		switch {
		case errors.Is(req.res.err, zksim.ErrConnectionLoss):
			hit("ConnectionLoss")
		case errors.Is(req.res.err, zksim.ErrSessionExpired):
			hit("SessionExpired")
		case errors.Is(req.res.err, zksim.ErrAuthFailed) && req.desc.Op != zkmem.OpAddAuth:
			hit("AuthFailed")
		}
	}
	if req.fate.Shuffle && req.desc.Op == zkmem.OpGetChildren {
		hit("Shuffle")
	}
	if req.fate.Slow > 0 || w.slowExtra > 0 {
		hit("Slow")
	}
}

// coverStrike counts the requests of s in flight as meeting fault.
func (w *World) coverStrike(s *session, fault string) {
	if w.cover == nil {
		return
	}
	count := func(req *request) {
		if req != nil && req.name != opExternal {
			w.cover[CoverageKey{Area: area(req.desc.Path), Op: req.desc.Op, Fault: fault}]++
		}
	}
	for i := range s.pending.len() {
		count(s.pending.at(i))
	}
	count(s.inService)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range s.inbox {
		count(r)
	}
	for i := range s.fifo.len() {
		if it := s.fifo.at(i); it.kind == itemReply {
			count(it.req)
		}
	}
}
