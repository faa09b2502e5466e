package difftest

import (
	"context"
	"fmt"
	"time"

	"github.com/zksim/zksim"
)

// realEventLimit bounds the wait for a real-server watch event that zkmem
// says has fired. gozk delivers a node event before the reply to any later
// request returns, so after the sync the event is already there; the limit
// is a guard, never reached when both agree.
const realEventLimit = 2 * time.Second

// pendingWatch is one watch set by one step on both backends.
type pendingWatch struct {
	id      int
	session int
	set     string // the step that set it
	mem     <-chan zksim.Event
	real    <-chan zksim.Event
}

// watchBook holds the watches that have not fired yet.
type watchBook struct {
	next    int
	pending []*pendingWatch
}

func (w *watchBook) add(session int, set string, mem, real <-chan zksim.Event) {
	w.next++
	w.pending = append(w.pending, &pendingWatch{id: w.next, session: session, set: set, mem: mem, real: real})
}

// check compares, for every pending watch, whether and how it fired on
// each backend since the last check. zkmem delivers watch events before the
// write that caused them returns; on the real server each session with
// pending watches first syncs: the server sends a session's events before
// its later replies, and gozk puts an event on its channel before the reply
// to any later request returns. It returns one line per difference.
func (w *watchBook) check(ctx context.Context, mem, real *backend, st *stats) []string {
	var diffs []string
	synced := make(map[int]bool)
	for _, pw := range w.pending {
		if synced[pw.session] || real.closed[pw.session] {
			continue
		}
		synced[pw.session] = true
		if _, err := real.conns[pw.session].Sync(ctx, real.root); err != nil {
			diffs = append(diffs, fmt.Sprintf("real: sync of s%d before checking watches: %v", pw.session, err))
		}
	}
	kept := w.pending[:0]
	for _, pw := range w.pending {
		select {
		case memEv := <-pw.mem:
			st.event(mem.event(memEv))
			realEv, ok := receive(pw.real, realEventLimit)
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("watch #%d (s%d, set by %q): zkmem fired %s, real did not", pw.id, pw.session, pw.set, mem.event(memEv)))
			case mem.event(memEv) != real.event(realEv):
				diffs = append(diffs, fmt.Sprintf("watch #%d (s%d, set by %q): zkmem fired %s, real fired %s", pw.id, pw.session, pw.set, mem.event(memEv), real.event(realEv)))
			}
			diffs = append(diffs, closedAfterOne("zkmem", pw, pw.mem)...)
			if ok {
				diffs = append(diffs, closedAfterOne("real", pw, pw.real)...)
			}
		default:
			select {
			case realEv := <-pw.real:
				diffs = append(diffs, fmt.Sprintf("watch #%d (s%d, set by %q): real fired %s, zkmem did not", pw.id, pw.session, pw.set, real.event(realEv)))
			default:
				kept = append(kept, pw)
			}
		}
	}
	clear(w.pending[len(kept):])
	w.pending = kept
	return diffs
}

// receive waits up to limit for an event on ch.
func receive(ch <-chan zksim.Event, limit time.Duration) (zksim.Event, bool) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case ev, ok := <-ch:
		return ev, ok
	case <-timer.C:
		return zksim.Event{}, false
	}
}

// closedAfterOne checks that a watch channel that delivered its event is
// closed with nothing more on it.
func closedAfterOne(side string, pw *pendingWatch, ch <-chan zksim.Event) []string {
	timer := time.NewTimer(realEventLimit)
	defer timer.Stop()
	select {
	case ev, ok := <-ch:
		if !ok {
			return nil
		}
		return []string{fmt.Sprintf("watch #%d (s%d) on %s: a second event %v", pw.id, pw.session, side, ev)}
	case <-timer.C:
		return []string{fmt.Sprintf("watch #%d (s%d) on %s: channel not closed after its event", pw.id, pw.session, side)}
	}
}
