package gozk

import (
	"context"
	"sync"

	"github.com/zksim/zksim"
)

// SessionEvents returns a new channel that receives every session state
// change from now on, in order, as events of type EventSession. The
// channel is buffered without bound, so a slow reader never holds up the
// connection. It is closed when ctx is done or the Conn is closed (events
// not yet delivered are then dropped, as with zkmem); on a Conn already
// closed it is closed at once.
func (c *Conn) SessionEvents(ctx context.Context) <-chan zksim.Event {
	s := &subscriber{
		out:     make(chan zksim.Event),
		wake:    make(chan struct{}, 1),
		stop:    ctx.Done(),
		abandon: c.closedCh,
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		close(s.out)
		return s.out
	}
	c.subs[s] = struct{}{}
	c.mu.Unlock()
	go s.run(func() {
		c.mu.Lock()
		delete(c.subs, s)
		c.mu.Unlock()
	})
	return s.out
}

// publishLocked queues a state change for every subscriber. c.mu is held.
func (c *Conn) publishLocked(st zksim.State) {
	ev := zksim.Event{Type: zksim.EventSession, State: st}
	for s := range c.subs {
		s.push(ev)
	}
}

// subscriber is one SessionEvents channel with its unbounded queue.
type subscriber struct {
	out     chan zksim.Event
	wake    chan struct{}   // capacity 1: "the queue changed"
	stop    <-chan struct{} // the subscriber's ctx is done
	abandon <-chan struct{} // the Conn is closed

	mu    sync.Mutex
	queue []zksim.Event
}

func (s *subscriber) push(ev zksim.Event) {
	s.mu.Lock()
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	s.poke()
}

func (s *subscriber) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run delivers the queue to out until the subscriber's ctx is done or the
// Conn is closed; then it closes out and calls leave.
func (s *subscriber) run(leave func()) {
	defer close(s.out)
	defer leave()
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			select {
			case <-s.wake:
				continue
			case <-s.stop:
				return
			case <-s.abandon:
				return
			}
		}
		ev := s.queue[0]
		s.queue[0] = zksim.Event{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		select {
		case s.out <- ev:
		case <-s.stop:
			return
		case <-s.abandon:
			return
		}
	}
}
