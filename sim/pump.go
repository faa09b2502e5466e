package sim

import (
	"sync"

	"github.com/zksim/zksim"
)

// pump feeds a channel without bound, so the scheduler never waits for a
// slow reader. Its goroutine ends once it is finished and drained, or when
// stop is closed (the subscriber's context).
type pump struct {
	mu    sync.Mutex
	queue []zksim.Event
	final bool
	wake  chan struct{}
	out   chan zksim.Event
	stop  <-chan struct{}
}

func newPump(stop <-chan struct{}) *pump {
	p := &pump{wake: make(chan struct{}, 1), out: make(chan zksim.Event), stop: stop}
	go p.run()
	return p
}

// push queues ev and reports whether the subscriber is still there.
func (p *pump) push(ev zksim.Event) bool {
	select {
	case <-p.stop:
		return false
	default:
	}
	p.mu.Lock()
	if !p.final {
		p.queue = append(p.queue, ev)
	}
	p.mu.Unlock()
	p.poke()
	return true
}

// finish closes the channel once everything queued is delivered.
func (p *pump) finish() {
	p.mu.Lock()
	p.final = true
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
				p.queue = p.queue[1:]
				p.mu.Unlock()
			case <-p.stop:
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
		}
	}
}
