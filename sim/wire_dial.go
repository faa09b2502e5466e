package sim

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// How a go-zookeeper client of a World finds and dials its server: the
// host provider the World gives it, and the dialer that opens a pipe
// (wire.go has the rest of the client's record).

// hostList is a zk.HostProvider that behaves as go-zookeeper's
// DNSHostProvider does with its addresses (without the DNS lookup, which
// would leave the bubble, and without the shuffle: the World gives the
// order): each attempt tries the next address, wrapping around, and the
// attempt that comes back to the address of the last connection that got
// a session (with one address, every attempt after the first, unless the
// previous connection got a session) starts a new round, which
// go-zookeeper makes wait a second after failing the requests queued
// meanwhile with ErrNoServer.
//
// Next is also where the World holds the client before each connection
// attempt until the scheduler lets it go, as a step ("dial"): go-zookeeper
// calls it right after failing the requests of a lost connection, and
// whether a request the client sends in that instant is failed with
// ErrNoServer or waits for the next connection would otherwise be left to
// the goroutines' race.
type hostList struct {
	s          *session
	addrs      []string
	mu         sync.Mutex
	curr, last int
}

func (h *hostList) Init([]string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.curr, h.last = -1, -1
	return nil
}

func (h *hostList) Len() int { return len(h.addrs) }

func (h *hostList) Next() (string, bool) {
	w := h.s.w
	gate := make(chan struct{})
	h.mu.Lock()
	next := (h.curr + 1) % len(h.addrs)
	h.mu.Unlock()
	r := &wireReq{gate: gate}
	if len(h.addrs) > 1 {
		r.dialTo = "m" + strconv.Itoa(addrMember(h.addrs[next]))
	}
	w.mu.Lock()
	closed := w.closed
	if !closed {
		h.s.arrive(&request{name: "dial", wire: r})
	}
	w.mu.Unlock()
	if closed {
		return h.addrs[0], true
	}
	select {
	case <-gate:
	case <-w.done:
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.curr = next
	retry := h.curr == h.last
	if h.last == -1 {
		h.last = 0
	}
	return h.addrs[h.curr], retry
}

func (h *hostList) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.curr
}

// errRefused is what a dial gets while a fault keeps the client off.
var errRefused = fmt.Errorf("sim: connection refused")

// dialer returns the client's zk.Dialer: a new pipe, unless the World is
// closed or a fault keeps the client off. A dial the fault refuses hangs,
// as one to an unreachable server does, until the fault ends or for the
// dial's timeout, whichever comes first, then fails: so go-zookeeper's
// next step (it fails the requests queued meanwhile with ErrNoServer, then
// waits a second) does not fall in the instant the client's own timers
// fired, where the order of the two would be left to chance.
func (wc *wireClient) dialer(s *session) zk.Dialer {
	return func(network, address string, timeout time.Duration) (netConn, error) {
		w := s.w
		waited := false
		for {
			w.mu.Lock()
			if w.closed {
				w.mu.Unlock()
				return nil, ErrClosed
			}
			left := timeout
			if !wc.refuse {
				left = min(left, wc.refuseUntil-time.Since(w.start))
			}
			if left > 0 && !waited {
				w.mu.Unlock()
				waited = true
				t := time.NewTimer(left)
				select {
				case <-t.C:
				case <-w.done:
				}
				t.Stop()
				continue
			}
			if left > 0 || wc.refuse || wc.dialDown {
				wc.dialDown = false
				w.mu.Unlock()
				return nil, errRefused
			}
			wc.dials++
			p := newPipe(s, wc.dials)
			p.addr, p.member = address, addrMember(address)
			live := wc.pipes[:0]
			for _, q := range wc.pipes {
				if !q.cliClosed {
					live = append(live, q)
				}
			}
			wc.pipes = append(live, p)
			w.mu.Unlock()
			return p, nil
		}
	}
}

// allowDials ends a refusal of dials (Faults.Reconnect).
func (wc *wireClient) allowDials(w *World) {
	w.mu.Lock()
	wc.refuse, wc.refuseUntil = false, 0
	w.mu.Unlock()
}

// refuseDials makes dials fail for d (until allowDials if d < 0).
func (wc *wireClient) refuseDials(w *World, d time.Duration) {
	w.mu.Lock()
	if d < 0 {
		wc.refuse = true
	} else if w.now+d > wc.refuseUntil {
		wc.refuseUntil = w.now + d
	}
	w.mu.Unlock()
}
