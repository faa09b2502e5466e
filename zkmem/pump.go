package zkmem

import (
	"sync"

	"github.com/zksim/zksim"
)

// pump delivers events to a channel without bound: the server never waits
// for a slow reader. Its goroutine ends when the pump is finished and
// drained, when stop is closed (the subscriber's context), or when abandon
// is closed (the Conn closed: see closeWith).
//
// The channel has a buffer of one, which the goroutine fills from the
// queue. That slot lets closeWith hand a reader who has kept up a last
// event without waiting for it.
type pump struct {
	mu        sync.Mutex
	queue     []zksim.Event
	final     bool
	outClosed bool
	wake      chan struct{}
	out       chan zksim.Event
	done      chan struct{}
	stop      <-chan struct{}
	abandon   <-chan struct{}
}

func newPump(stop, abandon <-chan struct{}) *pump {
	p := &pump{
		wake:    make(chan struct{}, 1),
		out:     make(chan zksim.Event, 1),
		done:    make(chan struct{}),
		stop:    stop,
		abandon: abandon,
	}
	go p.run()
	return p
}

// closeOut closes the channel once.
func (p *pump) closeOut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.outClosed {
		p.outClosed = true
		close(p.out)
	}
}

// closeWith ends an abandoned pump: once its goroutine has stopped, the
// events still queued are dropped, last is delivered if the reader has
// taken everything before it (the buffer slot is free), and the channel is
// closed. Call it only after abandon was closed.
func (p *pump) closeWith(last *zksim.Event) {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.outClosed {
		return
	}
	if last != nil {
		select {
		case p.out <- *last:
		default:
		}
	}
	p.outClosed = true
	close(p.out)
}

// push queues an event; after finish it is ignored.
func (p *pump) push(ev zksim.Event) {
	p.mu.Lock()
	if !p.final {
		p.queue = append(p.queue, ev)
	}
	p.mu.Unlock()
	p.poke()
}

// finish queues a last event (if ev is not nil) and closes the channel once
// everything queued was delivered.
func (p *pump) finish(ev *zksim.Event) {
	p.mu.Lock()
	if !p.final {
		if ev != nil {
			p.queue = append(p.queue, *ev)
		}
		p.final = true
	}
	p.mu.Unlock()
	p.poke()
}

func (p *pump) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *pump) run() {
	defer close(p.done)
	for {
		p.mu.Lock()
		if len(p.queue) > 0 {
			ev := p.queue[0]
			p.mu.Unlock()
			select {
			case p.out <- ev:
				p.mu.Lock()
				p.queue[0] = zksim.Event{}
				p.queue = p.queue[1:]
				p.mu.Unlock()
			case <-p.stop:
				p.closeOut()
				return
			case <-p.abandon:
				return
			}
			continue
		}
		final := p.final
		p.mu.Unlock()
		if final {
			p.closeOut()
			return
		}
		select {
		case <-p.wake:
		case <-p.stop:
			p.closeOut()
			return
		case <-p.abandon:
			return
		}
	}
}
