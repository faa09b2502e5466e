package sim

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// netConn is the type a zk.Dialer returns.
type netConn = net.Conn

// pipe is one in-memory connection of a go-zookeeper client: the client's
// end is a net.Conn; the server's end is a zkwire.FrameConn the scheduler
// feeds. Nothing crosses it but through the scheduler: what the client
// writes becomes requests of its session, what the server sends is read
// once delivered.
type pipe struct {
	s *session
	n int // the client's n-th connection

	fc       *zkwire.FrameConn // the server's end, made by its first frame
	addr     string            // the address dialled
	member   int               // the member it reaches on an ensemble (addrMember)
	answered bool              // the handshake's answer was sent (scheduler)

	// Guarded by s.w.mu.
	sentConnect bool   // the first frame (the handshake) was written
	wbuf        []byte // written, not yet a whole frame
	rbuf        []byte // delivered, not yet read
	srvClosed   bool   // the server closed it
	eof         bool   // and the client was told
	cliClosed   bool   // the client closed it

	// readable wakes the reader: a delivery, the server's close, the
	// client's own close or the read deadline. Reads wait on it alone, not
	// on a select over several channels: one read a frame.
	readable chan struct{}
	rdl      deadline // the read deadline (writes never block)
}

func newPipe(s *session, n int) *pipe {
	p := &pipe{s: s, n: n, readable: make(chan struct{}, 1)}
	p.rdl.wake = p.signal
	return p
}

// signal wakes a reader.
func (p *pipe) signal() {
	select {
	case p.readable <- struct{}{}:
	default:
	}
}

// Read implements net.Conn: what was delivered, then io.EOF once the
// server's close was delivered.
func (p *pipe) Read(b []byte) (int, error) {
	w := p.s.w
	for {
		w.mu.Lock()
		switch {
		case p.cliClosed:
			w.mu.Unlock()
			return 0, net.ErrClosed
		case len(p.rbuf) > 0:
			n := copy(b, p.rbuf)
			p.rbuf = p.rbuf[n:]
			w.mu.Unlock()
			return n, nil
		case p.eof:
			w.mu.Unlock()
			return 0, io.EOF
		}
		w.mu.Unlock()
		if p.rdl.passed() {
			return 0, os.ErrDeadlineExceeded
		}
		<-p.readable
	}
}

// Write implements net.Conn. It never blocks: every whole frame becomes a
// request of the session. What is written after the server closed the
// connection is lost.
func (p *pipe) Write(b []byte) (int, error) {
	w := p.s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if p.cliClosed {
		return 0, net.ErrClosed
	}
	if p.srvClosed || w.closed {
		return len(b), nil
	}
	// Whole frames are cut from b itself when nothing is left over from
	// an earlier write (go-zookeeper writes a frame at a time).
	data := b
	if len(p.wbuf) > 0 {
		p.wbuf = append(p.wbuf, b...)
		data = p.wbuf
	}
	for len(data) >= 4 {
		n := int(binary.BigEndian.Uint32(data))
		if n < 0 || len(data) < 4+n {
			break
		}
		body := data[4 : 4+n]
		data = data[4+n:]
		p.arrive(p.request(body))
	}
	switch {
	case len(data) == 0:
		p.wbuf = nil
	case len(p.wbuf) == 0:
		p.wbuf = slices.Clone(data) // b is the caller's
	default:
		p.wbuf = data
	}
	return len(b), nil
}

// request makes the request a frame is, from a copy of body (the
// caller's). Called with w.mu held.
func (p *pipe) request(body []byte) *request {
	rec := p.s.wire.spare
	if rec != nil {
		p.s.wire.spare = nil
	} else {
		rec = new(wireFrame)
	}
	rec.buf = append(rec.buf[:0], body...)
	body = rec.buf
	r := &rec.r
	*r = wireReq{pipe: p, body: body, rec: rec}
	req := &rec.req
	*req = request{wire: r, size: len(body)}
	if !p.sentConnect {
		p.sentConnect = true
		r.connect = true
		req.name = "connect"
		var cr jute.ConnectRequest
		if jute.Unmarshal(body, &cr) == nil {
			r.sid, r.seen = cr.SessionID, cr.LastZxidSeen
		}
		return req
	}
	var ok bool
	r.frame, ok = zkwire.ParseFrame(body)
	f := &r.frame
	req.desc = f.Request
	switch {
	case !ok || f.Request.Op == zkmem.OpAny:
		req.name = jute.OpName(f.Op)
	case f.Op == jute.OpSetWatches || f.Op == jute.OpSetWatches2:
		// go-zookeeper lists the watches in map order: the server gets
		// them sorted.
		var sw jute.SetWatches
		d := jute.NewDecoder(body[8:])
		sw.V2 = f.Op == jute.OpSetWatches2
		sw.Decode(d)
		if d.Err() == nil {
			for _, l := range [][]string{sw.DataWatches, sw.ExistWatches, sw.ChildWatches, sw.PersistentWatches, sw.PersistentRecursive} {
				slices.Sort(l)
			}
			r.body = jute.Marshal(slices.Clone(body[:8]), &sw)
			req.size = len(r.body)
			r.frame = zkwire.Frame{Xid: f.Xid, Op: f.Op} // served from the new body
		}
		req.name = req.desc.Op.String()
	default:
		req.name = f.Request.Op.String()
	}
	return req
}

// arrive puts req in the session's inbox. Called with w.mu held.
func (p *pipe) arrive(req *request) { p.s.arrive(req) }

// arrive puts req in the session's inbox. Called with w.mu held.
func (s *session) arrive(req *request) {
	w := s.w
	s.inbox = append(s.inbox, req)
	if len(s.inbox) == 1 {
		w.arrived = append(w.arrived, s)
	}
	w.signal()
}

// Close implements net.Conn: the client closes the connection. What it
// wrote since the scheduler last looked is lost with it (so that a write
// racing with the close in the same instant does not decide the run); the
// server reads the close after what it had not read yet.
func (p *pipe) Close() error {
	w := p.s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if p.cliClosed {
		return nil
	}
	p.cliClosed = true
	p.signal()
	s := p.s
	in := s.inbox[:0]
	for _, r := range s.inbox {
		if r.wire == nil || r.wire.pipe != p {
			in = append(in, r)
		}
	}
	clear(s.inbox[len(in):])
	s.inbox = in
	if !p.srvClosed && !w.closed {
		p.arrive(&request{name: "hangup", wire: &wireReq{pipe: p, hangup: true}})
	} else if !s.dirty {
		s.dirty = true
		w.dirty = append(w.dirty, s)
	}
	return nil
}

// LocalAddr implements net.Conn.
func (p *pipe) LocalAddr() net.Addr { return pipeAddr("client") }

// RemoteAddr implements net.Conn.
func (p *pipe) RemoteAddr() net.Addr { return pipeAddr(p.addr) }

// SetDeadline implements net.Conn: it sets the read deadline (writes never
// block, so a write deadline never matters).
func (p *pipe) SetDeadline(t time.Time) error {
	p.rdl.set(t)
	return nil
}

// SetReadDeadline implements net.Conn.
func (p *pipe) SetReadDeadline(t time.Time) error { p.rdl.set(t); return nil }

// SetWriteDeadline implements net.Conn. Writes never block, so it does
// nothing (go-zookeeper sets one around every write).
func (p *pipe) SetWriteDeadline(time.Time) error { return nil }

type pipeAddr string

func (a pipeAddr) Network() string { return "sim" }
func (a pipeAddr) String() string  { return string(a) }

// pipeOut is the server's end of a pipe as zkwire's FrameOut. Its methods
// are called with zkmem's lock held.
type pipeOut pipe

// Frame implements zkwire.FrameOut: the frame goes into the session's FIFO.
func (o *pipeOut) Frame(b []byte) {
	p := (*pipe)(o)
	s, w := p.s, p.s.w
	label, isReply := frameLabel(p, b)
	it := item{kind: itemFrame}
	if isReply {
		it.req = s.wire.serving
		if it.req == nil {
			label = "reply"
		}
	}
	w.mu.Lock()
	if !p.cliClosed {
		// The reply's item lives in its request's record while that
		// serves no other item (see wireClient.recycle).
		if it.req != nil && it.req.wire.rec != nil && it.req.wire.replies == 0 {
			it.wire = &it.req.wire.rec.reply
		} else {
			it.wire = new(wireItem)
		}
		*it.wire = wireItem{pipe: p, frame: b, label: label}
		if it.req != nil {
			it.req.wire.replies++
		}
		s.fifo.push(it)
		w.markDirty(s)
	}
	w.mu.Unlock()
	w.signal()
}

// Close implements zkwire.FrameOut: the server closes the connection; the
// client reads what was sent before, then EOF.
func (o *pipeOut) Close() {
	p := (*pipe)(o)
	s, w := p.s, p.s.w
	w.mu.Lock()
	if p.srvClosed {
		w.mu.Unlock()
		return
	}
	p.srvClosed = true
	if !p.cliClosed {
		s.fifo.push(item{kind: itemClose, wire: &wireItem{pipe: p}})
		w.markDirty(s)
	}
	w.mu.Unlock()
	w.signal()
}

// markDirty notes that the FIFO of s changed. Called with w.mu held.
func (w *World) markDirty(s *session) {
	if !s.dirty {
		s.dirty = true
		w.dirty = append(w.dirty, s)
	}
}

// deadline is a read deadline on virtual time: once it has passed, passed
// reports true and wake is called. One timer serves every deadline
// (go-zookeeper sets one before every read of a frame and clears it after),
// and it is left armed when a deadline is cleared or moved later: setting
// a deadline touches the timer only when the timer would fire too late for
// it. When the timer fires it marks the deadline passed only if a deadline
// is still set and has come, and arms itself again for a deadline still
// ahead; so a timer that fired in the very instant its deadline was
// replaced (a common coincidence on virtual time) cannot end the new one.
type deadline struct {
	wake func() // called when the deadline passes, without mu

	mu     sync.Mutex
	timer  *time.Timer
	armed  time.Time // when the timer fires; zero when it is not armed
	at     time.Time // the deadline; zero for none
	isPast bool
}

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	d.at, d.isPast = t, false
	if t.IsZero() {
		d.mu.Unlock()
		return
	}
	if dur := time.Until(t); dur > 0 {
		if d.armed.IsZero() || d.armed.After(t) {
			d.arm(t, dur)
		}
		d.mu.Unlock()
		return
	}
	d.isPast = true
	d.mu.Unlock()
	d.wake()
}

// arm makes the timer fire at t, dur from now. Called with mu held.
func (d *deadline) arm(t time.Time, dur time.Duration) {
	d.armed = t
	if d.timer == nil {
		d.timer = time.AfterFunc(dur, d.fire)
	} else {
		d.timer.Reset(dur)
	}
}

// fire is the timer's function: the deadline has come, unless it was
// cleared, or replaced by a later one (the timer then waits for that).
func (d *deadline) fire() {
	d.mu.Lock()
	d.armed = time.Time{}
	if d.at.IsZero() || d.isPast {
		d.mu.Unlock()
		return
	}
	if dur := time.Until(d.at); dur > 0 {
		d.arm(d.at, dur)
		d.mu.Unlock()
		return
	}
	d.isPast = true
	d.mu.Unlock()
	d.wake()
}

// passed reports whether the deadline has passed.
func (d *deadline) passed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.isPast
}

// closeWire closes every go-zookeeper client as the World closes: Close is
// asked of each (it gives up on its closeSession within a second of
// virtual time), and every connection ends, so that their goroutines
// return.
func (w *World) closeWire() {
	for _, s := range w.sessions {
		if wc := s.wire; wc != nil && wc.zc != nil {
			go wc.zc.Close()
		}
	}
	w.mu.Lock()
	var pipes []*pipe
	for _, s := range w.sessions {
		if s.wire != nil {
			pipes = append(pipes, s.wire.pipes...)
		}
	}
	for _, p := range pipes {
		p.srvClosed, p.eof = true, true
	}
	w.mu.Unlock()
	for _, p := range pipes {
		p.signal()
	}
}

// closeWireServer closes the wire server, if one was made.
func (w *World) closeWireServer() {
	if w.wsrv != nil {
		w.wsrv.Close()
	}
}

// zkEventType names a notification's type as the trace of a native
// client does.
func zkEventType(t int32) zksim.EventType { return zksim.EventType(t) }
