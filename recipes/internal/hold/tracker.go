package hold

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
)

// Tracker follows one held node: it starts Held and moves between Held and
// Doubtful with the connection, and ends Lost or Released. One goroutine
// per Tracker, which exits when the hold ends.
type Tracker struct {
	conn zksim.Conn
	path string

	mu      sync.Mutex
	state   recipes.HoldState
	changed chan struct{} // closed at the next change; stays closed once final
	done    chan struct{} // closed when the state becomes final

	cancel context.CancelFunc
	exited chan struct{}
}

// Start begins tracking the node at path, which the caller has just found
// owned by conn's session. It subscribes to the session events before it
// returns, so a change that happens after Start is never missed.
func Start(conn zksim.Conn, path string) *Tracker {
	ctx, cancel := context.WithCancel(context.Background())
	t := &Tracker{
		conn:    conn,
		path:    path,
		state:   recipes.Held,
		changed: make(chan struct{}),
		done:    make(chan struct{}),
		cancel:  cancel,
		exited:  make(chan struct{}),
	}
	events := conn.SessionEvents(ctx)
	go t.run(ctx, events)
	return t
}

// closedChan is the channel a nil Tracker hands out: already closed.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// State returns the current state; NotHeld for a nil Tracker.
func (t *Tracker) State() recipes.HoldState {
	if t == nil {
		return recipes.NotHeld
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state
}

// Watch returns the current state and a channel that is closed at the next
// change. Once the state is final the channel is already closed. A nil
// Tracker is NotHeld, with a closed channel.
func (t *Tracker) Watch() (recipes.HoldState, <-chan struct{}) {
	if t == nil {
		return recipes.NotHeld, closedChan
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state, t.changed
}

// Done returns a channel that is closed when the hold ends (Lost or
// Released); a nil Tracker's is already closed.
func (t *Tracker) Done() <-chan struct{} {
	if t == nil {
		return closedChan
	}
	return t.done
}

// Stop ends the tracking: the state becomes Released unless the hold was
// already lost. It waits for the goroutine to exit.
func (t *Tracker) Stop() {
	t.cancel()
	<-t.exited
	t.set(recipes.Released)
}

func (t *Tracker) set(s recipes.HoldState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state.Final() || t.state == s {
		return
	}
	t.state = s
	close(t.changed)
	if s.Final() {
		close(t.done)
		return
	}
	t.changed = make(chan struct{})
}

// run is the tracking loop. It returns once the hold is Lost or Stop is
// called.
func (t *Tracker) run(ctx context.Context, events <-chan zksim.Event) {
	defer close(t.exited)
	defer t.cancel() // ends the session-event subscription when the hold is lost
	var (
		watch     <-chan zksim.Event // the exists watch on our node, when armed
		lostTimer *time.Timer
		lostC     <-chan time.Time
	)
	defer func() {
		if lostTimer != nil {
			lostTimer.Stop()
		}
	}()
	suspend := func() {
		t.set(recipes.Doubtful)
		if lostTimer == nil {
			lostTimer = time.NewTimer(t.conn.SessionTimeout())
			lostC = lostTimer.C
		}
	}
	// verify checks the node after (re)connection and arms the watch. It
	// reports false when the hold is lost.
	verify := func() bool {
		if lostTimer != nil {
			lostTimer.Stop()
			lostTimer, lostC = nil, nil
		}
		var (
			ok  bool
			st  *zksim.Stat
			err error
		)
		if watch == nil {
			var w <-chan zksim.Event
			ok, st, w, err = t.conn.ExistsW(ctx, t.path)
			if err == nil {
				watch = w
			}
		} else {
			ok, st, err = t.conn.Exists(ctx, t.path)
		}
		switch {
		case errors.Is(err, zksim.ErrConnectionLoss):
			suspend() // the next Connected event verifies again
			return true
		case err != nil:
			return ctx.Err() != nil // stopped: not lost; anything else: lost
		case !ok || st.EphemeralOwner != t.conn.SessionID():
			return false
		}
		t.set(recipes.Held)
		return true
	}

	if t.conn.State() == zksim.StateConnected {
		if !verify() {
			t.set(recipes.Lost)
			return
		}
	} else if !t.onState(t.conn.State(), suspend) {
		t.set(recipes.Lost)
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				if ctx.Err() == nil {
					t.set(recipes.Lost) // the Conn was closed
				}
				return
			}
			if ev.State == zksim.StateConnected {
				if !verify() {
					t.set(recipes.Lost)
					return
				}
			} else if !t.onState(ev.State, suspend) {
				t.set(recipes.Lost)
				return
			}
		case ev := <-watch:
			watch = nil
			switch ev.Type {
			case zksim.EventNodeDeleted, zksim.EventNotWatching:
				if ctx.Err() == nil {
					t.set(recipes.Lost)
				}
				return
			}
			// Data changed (a leader proclaimed): re-arm if connected.
			if t.conn.State() == zksim.StateConnected && !verify() {
				t.set(recipes.Lost)
				return
			}
		case <-lostC:
			// Down for the whole session timeout: the server may have
			// expired the session, or may before we can reconnect
			// (Curator's LOST). The node may still be there (on an
			// ensemble no session expires without a leader): Release
			// deletes it.
			t.set(recipes.Lost)
			return
		}
	}
}

// onState handles a state other than connected and reports false when the
// hold is lost.
func (t *Tracker) onState(s zksim.State, suspend func()) bool {
	switch s {
	case zksim.StateExpired, zksim.StateClosed, zksim.StateAuthFailed:
		return false
	default:
		suspend()
		return true
	}
}
