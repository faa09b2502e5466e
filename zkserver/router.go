package zkserver

import (
	"errors"
	"fmt"
	"net"
	"sync"
)

// Router is a loopback proxy that stands for one client's connect string
// over an ensemble: it hands the client's connections to members in a fixed
// order, as a ZooKeeper client walks its server list (without the shuffle
// real clients do). The first connection goes to the first member of the
// list; each later one to the member after the one the previous connection
// went to, cyclically. A member that is down gets the connection closed at
// once, as a refused dial would, and the client moves on; a member that
// refuses the session (say, because the client has seen a newer zxid than
// the member has applied) closes it itself, with the same effect.
//
// Give the client [Router.Servers] as its server list; go-zookeeper pauses
// a second each time it has tried every address of its list, so the list
// repeats the router's address to let it walk the members without pausing.
type Router struct {
	addr    func(member int) string // a member's client address
	members []int
	ln      net.Listener

	mu      sync.Mutex
	next    int // index into members of the next connection's member
	current int // the member of the live connection, -1 if none
	live    *pipe
	closed  bool
	tried   []int // the member of every connection handed on, in order

	wg sync.WaitGroup
}

// routerRepeat is how many times Servers repeats the router's address per
// member of its list.
const routerRepeat = 3

// Router starts a router over members (indexes, 0-based), closed at
// [Ensemble.Stop] or [Router.Close]. It fails on an empty list or an index
// out of range.
func (e *Ensemble) Router(members ...int) (*Router, error) {
	if len(members) == 0 {
		return nil, errors.New("zkserver: a router needs at least one member")
	}
	for _, m := range members {
		if m < 0 || m >= len(e.members) {
			return nil, fmt.Errorf("zkserver: member %d out of range [0, %d)", m, len(e.members))
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Router{addr: e.Addr, members: append([]int(nil), members...), ln: ln, current: -1}
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		_ = ln.Close()
		return nil, errors.New("zkserver: the ensemble is stopped")
	}
	e.routers = append(e.routers, r)
	e.mu.Unlock()
	r.wg.Add(1)
	go r.acceptLoop()
	return r, nil
}

// NewRouter starts a router, as Ensemble.Router does, over the members of
// an ensemble served elsewhere (say, by zkwire), whose client addresses
// are addrs, member 0 first; the caller closes it. It fails on an empty
// list or an index out of range.
func NewRouter(addrs []string, members ...int) (*Router, error) {
	if len(members) == 0 {
		return nil, errors.New("zkserver: a router needs at least one member")
	}
	for _, m := range members {
		if m < 0 || m >= len(addrs) {
			return nil, fmt.Errorf("zkserver: member %d out of range [0, %d)", m, len(addrs))
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addrs = append([]string(nil), addrs...)
	r := &Router{addr: func(m int) string { return addrs[m] }, members: append([]int(nil), members...), ln: ln, current: -1}
	r.wg.Add(1)
	go r.acceptLoop()
	return r, nil
}

// Addr returns the router's address.
func (r *Router) Addr() string { return r.ln.Addr().String() }

// Servers returns the server list to give the client: the router's
// address, repeated.
func (r *Router) Servers() []string {
	out := make([]string, routerRepeat*len(r.members))
	for i := range out {
		out[i] = r.Addr()
	}
	return out
}

// Member returns the member the client's live connection goes to, or -1
// when it has none. A connection counts from the moment the router handed
// it on: the member may still refuse the session.
func (r *Router) Member() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current
}

// Tried returns the members the router handed connections to, in order,
// the down members it closed connections for included.
func (r *Router) Tried() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.tried...)
}

// Drop closes the client's live connection, if any: the client reconnects
// to the next member of its list.
func (r *Router) Drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live != nil {
		r.live.close()
	}
}

// Close stops the router and closes its connection.
func (r *Router) Close() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		_ = r.ln.Close()
		if r.live != nil {
			r.live.close()
		}
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *Router) acceptLoop() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		r.admit(c)
	}
}

func (r *Router) admit(client net.Conn) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		_ = client.Close()
		return
	}
	m := r.members[r.next]
	r.next = (r.next + 1) % len(r.members)
	r.tried = append(r.tried, m)
	r.mu.Unlock()

	server, err := net.Dial("tcp", r.addr(m))
	if err != nil {
		_ = client.Close()
		return
	}
	p := &pipe{client: client, server: server}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		p.close()
		return
	}
	if r.live != nil {
		r.live.close() // the client gave up on it
	}
	r.live, r.current = p, m
	r.wg.Add(2)
	go r.forward(p, server, client)
	go r.forward(p, client, server)
}

func (r *Router) forward(p *pipe, dst, src net.Conn) {
	defer r.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	p.close()
	r.mu.Lock()
	if r.live == p {
		r.live, r.current = nil, -1
	}
	r.mu.Unlock()
}
