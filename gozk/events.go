package gozk

import (
	"context"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/pump"
)

// subscriberBuffer is the buffer of a SessionEvents channel: one slot, so
// that Close can hand a reader who has kept up a last event without waiting
// for it (see pump.Pump.CloseWith).
const subscriberBuffer = 1

// SessionEvents returns a new channel that receives every session state
// change from now on, in order, as events of type EventSession. The
// channel is buffered without bound, so a slow reader never holds up the
// connection. It is closed when ctx is done, or when the Conn is closed:
// then events not yet delivered are dropped, a reader who has taken every
// earlier event gets a last one with StateClosed, and the channel is closed
// (as with zkmem). On a Conn already closed it is closed at once.
func (c *Conn) SessionEvents(ctx context.Context) <-chan zksim.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		ch := make(chan zksim.Event)
		close(ch)
		return ch
	}
	p := pump.New(subscriberBuffer, ctx.Done(), c.closedCh)
	c.subs = append(c.subs, p)
	return p.Out()
}

// publishLocked queues a state change for every subscriber and forgets
// those whose ctx is done. c.mu is held.
func (c *Conn) publishLocked(st zksim.State) {
	ev := zksim.Event{Type: zksim.EventSession, State: st}
	live := c.subs[:0]
	for _, p := range c.subs {
		if p.Push(ev) { // else the subscriber went away
			live = append(live, p)
		}
	}
	clear(c.subs[len(live):])
	c.subs = live
}
