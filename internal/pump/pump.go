package pump

import (
	"sync"

	"github.com/zksim/zksim"
)

// Pump queues the events pushed to it and feeds them, in order, to its
// channel. Its goroutine ends when the pump is finished and drained, or
// when stop is closed (the subscriber's context): it then closes the
// channel. It also ends when abandon is closed (the Conn closed), leaving
// the channel open for CloseWith.
type Pump struct {
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

// New starts a pump whose channel has buffer slots, which the goroutine
// fills from the queue. A nil stop or abandon never closes.
func New(buffer int, stop, abandon <-chan struct{}) *Pump {
	p := &Pump{
		wake:    make(chan struct{}, 1),
		out:     make(chan zksim.Event, buffer),
		done:    make(chan struct{}),
		stop:    stop,
		abandon: abandon,
	}
	go p.run()
	return p
}

// Out returns the channel the events arrive on.
func (p *Pump) Out() <-chan zksim.Event { return p.out }

// Push queues ev (after Finish it is ignored) and reports whether the
// subscriber is still there: false, with nothing queued, once stop is
// closed.
func (p *Pump) Push(ev zksim.Event) bool {
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

// Finish queues a last event (if last is not nil) and closes the channel
// once everything queued was delivered.
func (p *Pump) Finish(last *zksim.Event) {
	p.mu.Lock()
	if !p.final {
		if last != nil {
			p.queue = append(p.queue, *last)
		}
		p.final = true
	}
	p.mu.Unlock()
	p.poke()
}

// CloseWith ends an abandoned pump: once its goroutine has stopped, the
// events still queued are dropped, last is delivered if the reader has
// taken everything before it (a buffer slot is free), and the channel is
// closed. Call it only after abandon was closed.
func (p *Pump) CloseWith(last *zksim.Event) {
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

// closeOut closes the channel once.
func (p *Pump) closeOut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.outClosed {
		p.outClosed = true
		close(p.out)
	}
}

func (p *Pump) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *Pump) run() {
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
