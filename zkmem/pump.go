package zkmem

import (
	"sync"

	"github.com/zksim/zksim"
)

// pump delivers events to a channel without bound: the server never waits
// for a slow reader. Its goroutine ends when the pump is finished and
// drained, when stop is closed (the subscriber's context), or when abandon
// is closed (the Conn closed; undelivered events are then dropped).
type pump struct {
	mu      sync.Mutex
	queue   []zksim.Event
	final   bool
	wake    chan struct{}
	out     chan zksim.Event
	stop    <-chan struct{}
	abandon <-chan struct{}
}

func newPump(stop, abandon <-chan struct{}) *pump {
	p := &pump{
		wake:    make(chan struct{}, 1),
		out:     make(chan zksim.Event),
		stop:    stop,
		abandon: abandon,
	}
	go p.run()
	return p
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
	defer close(p.out)
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
				return
			case <-p.abandon:
				return
			}
			continue
		}
		final := p.final
		p.mu.Unlock()
		if final {
			return
		}
		select {
		case <-p.wake:
		case <-p.stop:
			return
		case <-p.abandon:
			return
		}
	}
}
