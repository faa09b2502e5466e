package zkserver

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// link is a loopback TCP proxy on one path between two ensemble members:
// member i reaches member j's quorum or election port through it. It can
// cut the path (close live connections, hold new ones unanswered), and
// hold the bytes going one way without closing anything (a member that
// lags).
type link struct {
	target string
	ln     net.Listener
	// rewrite, when not nil, rewrites the first bytes the dialling member
	// sends (the election protocol's initial message) before they go on.
	rewrite func(src io.Reader) ([]byte, error)

	mu       sync.Mutex
	resumed  *sync.Cond // signalled when holdDown or holdUp is cleared or the link closes
	cut      bool
	closed   bool
	holdDown bool // hold what the target sends back to the dialler
	holdUp   bool // hold what the dialler sends to the target
	live     map[*pipe]struct{}
	held     map[net.Conn]struct{}

	wg sync.WaitGroup
}

func listenLink(target string) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{
		target: target,
		ln:     ln,
		live:   make(map[*pipe]struct{}),
		held:   make(map[net.Conn]struct{}),
	}
	l.resumed = sync.NewCond(&l.mu)
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

func (l *link) addr() string { return l.ln.Addr().String() }

// setCut cuts the link (closing its live connections and holding new ones)
// or restores it (closing the held connections, so their members redial).
func (l *link) setCut(cut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = cut
	if cut {
		for p := range l.live {
			p.close()
			delete(l.live, p)
		}
		l.resumed.Broadcast()
		return
	}
	for c := range l.held {
		_ = c.Close()
		delete(l.held, c)
	}
}

// setHold holds or releases the bytes flowing to the dialler (up false)
// or to the target (up true). Held bytes are delivered in order on
// release.
func (l *link) setHold(up, hold bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if up {
		l.holdUp = hold
	} else {
		l.holdDown = hold
	}
	l.resumed.Broadcast()
}

func (l *link) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		_ = l.ln.Close()
		for p := range l.live {
			p.close()
			delete(l.live, p)
		}
		for c := range l.held {
			_ = c.Close()
			delete(l.held, c)
		}
		l.resumed.Broadcast()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

func (l *link) acceptLoop() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		l.wg.Add(1) // the accept loop's count keeps the group above zero
		go func() {
			defer l.wg.Done()
			l.admit(c)
		}()
	}
}

func (l *link) admit(client net.Conn) {
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		_ = client.Close()
		return
	case l.cut:
		l.held[client] = struct{}{}
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	server, err := l.dialTarget()
	if err != nil {
		_ = client.Close()
		return
	}
	p := &pipe{client: client, server: server}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.cut {
		p.close()
		return
	}
	l.live[p] = struct{}{}
	l.wg.Add(2)
	go l.forward(p, server, client, l.rewrite)
	go l.forward(p, client, server, nil)
}

// linkDialPatience is how long a link keeps dialling a target that
// refuses connections before it closes the connection it accepted.
const linkDialPatience = 3 * time.Second

// dialTarget dials the target, retrying while it refuses. The link has
// accepted the member's connection already, so a refusal cannot be passed
// on; closing at once would look like a broken connection, which a member
// does not retry as it retries a refused one. (A new leader opens its
// quorum port a moment after it starts leading, and its followers dial it
// at once.) It gives up after linkDialPatience, or when the link is cut or
// closed.
func (l *link) dialTarget() (net.Conn, error) {
	deadline := time.Now().Add(linkDialPatience)
	for {
		c, err := net.DialTimeout("tcp", l.target, time.Second)
		if err == nil {
			return c, nil
		}
		l.mu.Lock()
		gone := l.cut || l.closed
		l.mu.Unlock()
		if gone || time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// setRewrite sets the rewrite of the first message of every later
// connection.
func (l *link) setRewrite(rewrite func(io.Reader) ([]byte, error)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rewrite = rewrite
}

// forward copies one direction of p, waiting while that direction is held:
// up (dialler to target) when rewrite is set, which then rewrites its first
// message.
func (l *link) forward(p *pipe, dst, src net.Conn, rewrite func(io.Reader) ([]byte, error)) {
	up := dst != p.client
	defer l.wg.Done()
	defer func() {
		p.close()
		l.mu.Lock()
		delete(l.live, p)
		l.mu.Unlock()
	}()
	if rewrite != nil {
		first, err := rewrite(src)
		if err != nil || !l.waitReleased(p, up) {
			return
		}
		if _, err := dst.Write(first); err != nil {
			return
		}
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !l.waitReleased(p, up) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// waitReleased blocks while the direction is held; it reports false when
// the pipe or the link was closed meanwhile.
func (l *link) waitReleased(p *pipe, up bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.closed && (up && l.holdUp || !up && l.holdDown) {
		if _, live := l.live[p]; !live {
			return false
		}
		l.resumed.Wait()
	}
	_, live := l.live[p]
	return !l.closed && live
}

// Election protocol versions of QuorumCnxManager's initial message.
const (
	electionProtocolV1 = -65536
	electionProtocolV2 = -65535
)

// rewriteElectionAddr returns a rewrite for an election link that replaces
// the election address a member announces in its initial message with
// addr. A member that wins the connection challenge closes the incoming
// connection and dials back the announced address; announcing the
// dialler's own link makes that call go through a link too, so that
// cutting the links isolates a member.
func rewriteElectionAddr(addr string) func(io.Reader) ([]byte, error) {
	return func(src io.Reader) ([]byte, error) {
		var head [8]byte
		if _, err := io.ReadFull(src, head[:]); err != nil {
			return nil, err
		}
		version := int64(binary.BigEndian.Uint64(head[:]))
		if version != electionProtocolV1 && version != electionProtocolV2 {
			return head[:], nil // the old protocol: a server id, no address
		}
		var rest [12]byte // sid, then the address's length
		if _, err := io.ReadFull(src, rest[:]); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(rest[8:])
		if n > 4096 {
			return nil, errors.New("zkserver: election initial message too long")
		}
		if _, err := io.CopyN(io.Discard, src, int64(n)); err != nil {
			return nil, err
		}
		out := append(head[:], rest[:8]...)
		out = binary.BigEndian.AppendUint32(out, uint32(len(addr)))
		return append(out, addr...), nil
	}
}
