package zkwire

import (
	"bufio"
	"crypto/subtle"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

var connSeq atomic.Int64

// conn is one client connection: a reader goroutine that runs requests in
// arrival order and a writer goroutine that sends replies and
// notifications in the order they were queued.
type conn struct {
	srv    *Server
	nc     net.Conn
	br     *bufio.Reader
	seq    int64
	remote string
	since  time.Time

	sess atomic.Pointer[session]

	mu      sync.Mutex
	q       []frame
	closing bool
	wake    chan struct{}

	done      chan struct{}
	closeOnce sync.Once

	recv, sent atomic.Int64
	lastZxid   atomic.Int64
	lastXid    atomic.Int32
	lastOp     atomic.Value // string
}

type frame struct {
	b          []byte
	release    time.Time // zero: at once
	closeAfter bool
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv:    s,
		nc:     nc,
		br:     bufio.NewReaderSize(nc, 16<<10),
		seq:    connSeq.Add(1),
		remote: nc.RemoteAddr().String(),
		since:  time.Now(),
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	c.lastOp.Store("NA")
	return c
}

// close closes the connection at once; queued frames are dropped.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.q = nil
		c.mu.Unlock()
		close(c.done)
		c.nc.Close()
	})
}

// enqueue queues a frame for the writer. It never blocks: it is called with
// zkmem's lock held. closeAfter closes the connection once the frame is
// written.
func (c *conn) enqueue(b []byte, closeAfter bool) {
	var release time.Time
	if ws := c.sess.Load(); ws != nil {
		if d := time.Duration(ws.delay.Load()); d > 0 {
			release = time.Now().Add(d)
		}
	}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.q = append(c.q, frame{b: b, release: release, closeAfter: closeAfter})
	if closeAfter {
		c.closing = true // nothing after the last frame
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *conn) writeLoop() {
	defer c.srv.wg.Done()
	bw := bufio.NewWriterSize(c.nc, 32<<10)
	var batch []frame
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		c.mu.Lock()
		batch, c.q = c.q, batch[:0]
		c.mu.Unlock()
		for i, f := range batch {
			if !f.release.IsZero() {
				if d := time.Until(f.release); d > 0 {
					if bw.Flush() != nil {
						c.close()
						return
					}
					t := time.NewTimer(d)
					select {
					case <-t.C:
					case <-c.done:
						t.Stop()
						return
					}
				}
			}
			if _, err := bw.Write(f.b); err != nil {
				c.close()
				return
			}
			c.sent.Add(1)
			c.srv.sent.Add(1)
			if f.closeAfter {
				bw.Flush()
				c.close()
				return
			}
			batch[i] = frame{}
		}
		if bw.Flush() != nil {
			c.close()
			return
		}
	}
}

func (c *conn) readLoop() {
	defer c.srv.wg.Done()
	defer c.finish()
	if !c.handshake() {
		return
	}
	ws := c.sess.Load()
	var buf []byte
	for {
		if !ws.waitIfPaused(c.done) {
			return
		}
		c.nc.SetReadDeadline(time.Now().Add(ws.timeout))
		n, err := jute.ReadFrameLength(c.br)
		if err == nil {
			buf, err = jute.ReadFrameBody(c.br, n, c.srv.opts.MaxBuffer, buf)
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && ws.current() == c {
				// The client said nothing for its whole session timeout: the
				// server expires the session.
				ws.expire()
			}
			return
		}
		// A pause that began while the read was blocked holds the frame.
		if !ws.waitIfPaused(c.done) {
			return
		}
		if !c.handle(ws, buf) {
			return
		}
		if cap(buf) > 64<<10 {
			buf = nil // do not keep a big frame's buffer
		}
	}
}

// finish runs when the reader stops: it waits for a last frame to be
// written, closes the connection and detaches the session from it.
func (c *conn) finish() {
	c.mu.Lock()
	draining := c.closing // a last frame is queued or being written
	c.mu.Unlock()
	if draining {
		t := time.NewTimer(5 * time.Second)
		select {
		case <-c.done:
		case <-t.C:
		}
		t.Stop()
	}
	c.close()
	if ws := c.sess.Load(); ws != nil && ws.detach(c) {
		ws.rs.Detach()
	}
	c.srv.forget(c)
}

// handshake reads the first frame: a four-letter word, or a ConnectRequest
// that opens or resumes a session. It reports whether requests follow.
func (c *conn) handshake() bool {
	c.nc.SetReadDeadline(time.Now().Add(c.srv.opts.SessionlessTimeout))
	n, err := jute.ReadFrameLength(c.br)
	if err != nil {
		return false
	}
	if word, ok := fourLetterWord(n); ok {
		c.fourLetter(word)
		return false
	}
	body, err := jute.ReadFrameBody(c.br, n, c.srv.opts.MaxBuffer, nil)
	if err != nil {
		return false
	}
	c.recv.Add(1)
	c.srv.received.Add(1)
	var req jute.ConnectRequest
	d := jute.NewDecoder(body)
	req.Decode(d)
	if d.Err() != nil {
		return false
	}
	zk := c.srv.zk
	if req.LastZxidSeen > zk.LastZxid() {
		// "Refusing session request for client ... as it has seen zxid
		// ... client must try another server": closed without an answer.
		return false
	}
	timeout := zk.NegotiateTimeout(time.Duration(req.TimeOut) * time.Millisecond)
	resp := jute.ConnectResponse{HasReadOnly: req.HasReadOnly}
	if req.SessionID == 0 {
		ws := &session{srv: c.srv}
		rs, err := zk.OpenRemote(timeout, ws.event)
		if err != nil {
			return false
		}
		ws.rs, ws.id, ws.timeout = rs, rs.ID(), rs.Timeout()
		c.sess.Store(ws)
		ws.attach(c)
		c.srv.addSession(ws)
		resp.TimeOut = int32(ws.timeout / time.Millisecond)
		resp.SessionID = ws.id
		resp.Passwd = c.srv.password(ws.id)
		c.enqueue(jute.AppendFrame(nil, &resp), false)
		return true
	}
	ws := c.srv.session(req.SessionID)
	if ws != nil && !ws.waitIfPaused(c.done) {
		return false // a paused session's server hears no reconnect either
	}
	valid := ws != nil && subtle.ConstantTimeCompare(req.Passwd, c.srv.password(req.SessionID)) == 1
	if valid {
		c.sess.Store(ws)
		if old := ws.attach(c); old != nil {
			old.close() // the client moved: its old connection goes
		}
		if ws.rs.Attach() != nil {
			ws.detach(c)
			c.sess.Store(nil)
			ws.end()
			valid = false
		}
	}
	if !valid {
		// An expired session, or a wrong password: timeout 0, session 0,
		// 16 zero bytes, then the connection closes.
		resp.Passwd = make([]byte, 16)
		c.enqueue(jute.AppendFrame(nil, &resp), true)
		return false
	}
	resp.TimeOut = int32(timeout / time.Millisecond)
	resp.SessionID = ws.id
	resp.Passwd = c.srv.password(ws.id)
	c.enqueue(jute.AppendFrame(nil, &resp), false)
	return true
}

// handle runs one request. It reports whether the connection goes on.
func (c *conn) handle(ws *session, body []byte) bool {
	start := time.Now()
	c.recv.Add(1)
	c.srv.received.Add(1)
	d := jute.NewDecoder(body)
	var h jute.RequestHeader
	h.Decode(d)
	if d.Err() != nil {
		return false // a header cut short: the server closes the connection
	}
	c.lastXid.Store(h.Xid)
	if !validOp(h.Type) {
		// UnimplementedRequestProcessor: the error, then the connection
		// closes. The reply carries the fresh request's zxid, -1.
		c.enqueue(jute.AppendFrame(nil, &jute.ReplyHeader{Xid: h.Xid, Zxid: -1, Err: jute.ErrUnimplemented}), true)
		return false
	}
	f := ws.takeFault(h.Type)
	if f == dropRequest {
		return false
	}
	req, bad := decodeRequest(h.Type, d)
	if bad && h.Type == jute.OpAuth {
		return false // an auth packet that does not decode closes the connection
	}
	last := h.Type == jute.OpCloseSession
	ws.rs.Do(req, func(resp *zkmem.RemoteResponse) {
		if f == loseReply {
			return
		}
		zxid := resp.Zxid
		xid := h.Xid
		switch h.Type {
		case jute.OpAuth:
			zxid = 0
		case jute.OpPing:
			xid = jute.XidPing
		}
		hdr := jute.ReplyHeader{Xid: xid, Zxid: zxid}
		var body jute.Record
		if bad {
			hdr.Err = jute.ErrMarshallingError
		} else if resp.Err != nil {
			hdr.Err = int32(codeOf(resp.Err))
		} else {
			body = replyBody(h.Type, req, resp)
		}
		c.lastZxid.Store(zxid)
		c.enqueue(jute.AppendFrame(nil, &hdr, body), last || resp.AuthFailed)
		if resp.AuthFailed {
			last = true
		}
	})
	if h.Type == jute.OpCloseSession {
		// The session is gone; the reply (unless lost) closes the
		// connection once written.
		ws.release(c)
		ws.end()
		if f == loseReply {
			c.close()
		}
		return false
	}
	if f == loseReply {
		return false
	}
	c.lastOp.Store(jute.OpName(h.Type))
	c.srv.lat.add(time.Since(start))
	return !last
}

// validOp mirrors Request.isValid, plus the auth packet.
func validOp(op int32) bool {
	switch op {
	case jute.OpCheck, jute.OpCloseSession, jute.OpCreate, jute.OpCreate2, jute.OpCreateTTL,
		jute.OpCreateContainer, jute.OpDelete, jute.OpDeleteContainer, jute.OpExists,
		jute.OpGetACL, jute.OpGetChildren, jute.OpGetAllChildrenNumber, jute.OpGetChildren2,
		jute.OpGetData, jute.OpGetEphemerals, jute.OpMulti, jute.OpMultiRead, jute.OpPing,
		jute.OpReconfig, jute.OpSetACL, jute.OpSetData, jute.OpSetWatches, jute.OpSetWatches2,
		jute.OpSync, jute.OpCheckWatches, jute.OpRemoveWatches, jute.OpAddWatch, jute.OpWhoAmI,
		jute.OpAuth:
		return true
	}
	return false
}
