package zkserver

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy is a loopback TCP proxy between clients and a server, for tests
// that cut connections. Clients connect to [Proxy.Addr]; each accepted
// connection is forwarded to the target.
//
// [Proxy.Cut] closes every live connection and holds new ones (accepted,
// never answered) until [Proxy.Restore], which closes the held connections
// so their clients redial at once and get through. Holding the cut longer
// than a session's timeout makes the server expire the session, since no
// heartbeat reaches it; the client learns of it when it reconnects after
// Restore.
type Proxy struct {
	target string
	ln     net.Listener

	mu     sync.Mutex
	cut    bool
	closed bool
	live   map[*pipe]struct{}
	held   map[net.Conn]struct{}

	wg sync.WaitGroup // accept loop and forwarding goroutines
}

// pipe is one forwarded connection.
type pipe struct {
	client, server net.Conn
	once           sync.Once
}

func (p *pipe) close() {
	p.once.Do(func() {
		_ = p.client.Close()
		_ = p.server.Close()
	})
}

// NewProxy starts a proxy to target on a free 127.0.0.1 port and closes it
// at t.Cleanup.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := ListenProxy(target)
	if err != nil {
		t.Fatalf("zkserver: proxy to %s: %v", target, err)
	}
	t.Cleanup(p.Close)
	return p
}

// ListenProxy starts a proxy to target on a free 127.0.0.1 port. The caller
// closes it.
func ListenProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		target: target,
		ln:     ln,
		live:   make(map[*pipe]struct{}),
		held:   make(map[net.Conn]struct{}),
	}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr returns the address clients connect to, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every live connection and holds new ones until Restore. The
// clients see their connections drop; their sessions live on in the server
// until their timeouts pass without a heartbeat.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for pp := range p.live {
		pp.close()
	}
}

// Restore ends a cut: new connections are forwarded again, and the ones
// held during the cut are closed so that their clients redial.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	p.closeHeld()
}

// Close stops the proxy, closes every connection and waits for its
// goroutines to end. It is idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		_ = p.ln.Close()
		for pp := range p.live {
			pp.close()
		}
		p.closeHeld()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) closeHeld() {
	for c := range p.held {
		_ = c.Close()
		delete(p.held, c)
	}
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p.admit(client)
	}
}

// admit holds, rejects or forwards a newly accepted connection.
func (p *Proxy) admit(client net.Conn) {
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		_ = client.Close()
		return
	case p.cut:
		p.held[client] = struct{}{}
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()

	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	pp := &pipe{client: client, server: server}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.cut {
		// Cut or closed while dialling: behave as if it happened after.
		pp.close()
		return
	}
	p.live[pp] = struct{}{}
	p.wg.Add(2)
	go p.forward(pp, pp.server, pp.client)
	go p.forward(pp, pp.client, pp.server)
}

// forward copies one direction of a pipe; when either direction ends, the
// whole pipe is closed.
func (p *Proxy) forward(pp *pipe, dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	pp.close()
	p.mu.Lock()
	delete(p.live, pp)
	p.mu.Unlock()
}
