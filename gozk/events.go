package gozk

import (
	"context"
	"sync"

	"github.com/zksim/zksim"
)

// SessionEvents returns a new channel that receives every session state
// change from now on, in order, as events of type EventSession. The
// channel is buffered without bound, so a slow reader never holds up the
// connection. It is closed when ctx is done, or when the Conn is closed:
// then events not yet delivered are dropped, a reader who has taken every
// earlier event gets a last one with StateClosed, and the channel is closed
// (as with zkmem). On a Conn already closed it is closed at once.
func (c *Conn) SessionEvents(ctx context.Context) <-chan zksim.Event {
	s := &subscriber{
		out:     make(chan zksim.Event, 1),
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
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

// subscriber is one SessionEvents channel with its unbounded queue. Its
// goroutine moves the queue into out, whose one-event buffer lets Close
// hand a reader who has kept up a last event without waiting for it.
type subscriber struct {
	out     chan zksim.Event
	wake    chan struct{}   // capacity 1: "the queue changed"
	done    chan struct{}   // closed when the goroutine has stopped
	stop    <-chan struct{} // the subscriber's ctx is done
	abandon <-chan struct{} // the Conn is closed

	mu        sync.Mutex
	queue     []zksim.Event
	outClosed bool
}

func (s *subscriber) push(ev zksim.Event) {
	s.mu.Lock()
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// run delivers the queue to out until the subscriber's ctx is done (then it
// closes out) or the Conn is closed (then closeWith does). It calls leave
// when it stops.
func (s *subscriber) run(leave func()) {
	defer close(s.done)
	defer leave()
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.mu.Unlock()
			select {
			case <-s.wake:
				continue
			case <-s.stop:
				s.closeOut()
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
			s.closeOut()
			return
		case <-s.abandon:
			return
		}
	}
}

func (s *subscriber) closeOut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.outClosed {
		s.outClosed = true
		close(s.out)
	}
}

// closeWith ends the subscriber of a closed Conn: once its goroutine has
// stopped, last goes into out if its buffer is free, and out is closed.
func (s *subscriber) closeWith(last zksim.Event) {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outClosed {
		return
	}
	select {
	case s.out <- last:
	default:
	}
	s.outClosed = true
	close(s.out)
}
