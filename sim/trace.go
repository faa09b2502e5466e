package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// tracer records the trace: one line per step, GUIDs named by their first
// appearance.
type tracer struct {
	on    bool
	logf  func(string, ...any)
	lines []string
	guids map[string]string
}

func (t *tracer) init(on bool, logf func(string, ...any)) {
	t.on = on || logf != nil
	t.logf = logf
	t.guids = make(map[string]string)
}

func (t *tracer) add(line string) {
	line = t.normalizeHex(t.normalize(line))
	t.lines = append(t.lines, line)
	if t.logf != nil {
		t.logf("%s", line)
	}
}

// normalize replaces every UUID in line (8-4-4-4-12 hex digits) by {gN},
// N counting GUIDs in order of first appearance in the trace.
func (t *tracer) normalize(line string) string {
	if len(line) < 36 || strings.Count(line, "-") < 4 {
		return line
	}
	var b strings.Builder
	last := 0
	// A UUID has its first dash 8 bytes in: the candidates are the dashes
	// of the line, in order (each step traces a line, most with a dash).
	for j := 8; j+28 <= len(line); j++ {
		d := strings.IndexByte(line[j:len(line)-27], '-')
		if d < 0 {
			break
		}
		j += d
		i := j - 8
		if i < last || (i > 0 && isHex(line[i-1])) || !isUUID(line[i:i+36]) || (i+36 < len(line) && isHex(line[i+36])) {
			continue
		}
		g := line[i : i+36]
		b.WriteString(line[last:i])
		b.WriteString(t.guidLabel(g))
		last = i + 36
		j = last + 7 // the next candidate's dash is 8 bytes past its start, at last or later
	}
	if last == 0 {
		return line
	}
	b.WriteString(line[last:])
	return b.String()
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isUUID(s string) bool {
	for i := range 36 {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

// formatTime renders a virtual time as seconds with milliseconds.
func formatTime(d time.Duration) string { return string(appendTime(nil, d)) }

// appendTime appends formatTime(d) to b. Every step formats its time: no
// fmt here.
func appendTime(b []byte, d time.Duration) []byte {
	ms := d.Milliseconds()
	if ms < 0 {
		return fmt.Appendf(b, "%d.%03ds", ms/1000, ms%1000)
	}
	b = strconv.AppendInt(b, ms/1000, 10)
	frac := ms % 1000
	return append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10), 's')
}

// stepf records a step: the step counter goes up and a line is traced.
func (w *World) stepf(format string, args ...any) {
	w.step++
	if !w.trace.on {
		return
	}
	b := make([]byte, 0, 96)
	b = strconv.AppendInt(append(b, "step "...), int64(w.step), 10)
	b = append(appendTime(append(b, " t="...), w.now), ' ')
	w.trace.add(string(fmt.Appendf(b, format, args...)))
}

// notef records a line that is not a step (a client connecting, say).
func (w *World) notef(format string, args ...any) {
	if !w.trace.on {
		return
	}
	b := append(appendTime(append(make([]byte, 0, 96), "note t="...), w.now), ' ')
	w.trace.add(string(fmt.Appendf(b, format, args...)))
}

// Note adds a line to the trace. Call it from the World's goroutine; lines
// written from client goroutines would land in an order that depends on
// timing.
func (w *World) Note(format string, args ...any) { w.notef(format, args...) }

// Trace returns the trace so far, one line per step (and notes).
func (w *World) Trace() []string { return append([]string(nil), w.trace.lines...) }

// TraceString returns the trace as one string, a line per step.
func (w *World) TraceString() string { return strings.Join(w.trace.lines, "\n") + "\n" }

// guidLabel returns the label that stands for GUID g in the trace ("{g1}",
// "{g2}", ... in the order the GUIDs first appear).
func (t *tracer) guidLabel(g string) string {
	label, ok := t.guids[g]
	if !ok {
		label = "{g" + strconv.Itoa(len(t.guids)+1) + "}"
		t.guids[g] = label
	}
	return label
}
